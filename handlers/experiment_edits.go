package handlers

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/a-h/templ"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/control"
	"github.com/resolute-ml/resolute/markdown"
	"github.com/resolute-ml/resolute/views"
)

// isHTMX says whether htmx sent the request, which then gets a fragment.
func isHTMX(r *http.Request) bool { return r.Header.Get("HX-Request") != "" }

// editableExperiment loads the experiment of {id} and the form of a request
// that edits it; the service says whether the requester may.
func (s *Server) editableExperiment(r *http.Request) (resolute.Experiment, error) {
	e, err := s.experimentParam(r)
	if err == nil {
		err = parseForm(r)
	}
	return e, err
}

// handleExperimentNotesForm serves POST /experiments/{id}/notes (notes):
// the notes tab's editor. htmx gets the notes section; a plain form post
// goes back to the tab. Bad notes come back with their error, as 400.
func (s *Server) handleExperimentNotesForm(w http.ResponseWriter, r *http.Request) {
	e, err := s.editableExperiment(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	notes := strings.ReplaceAll(r.PostFormValue("notes"), "\r\n", "\n")
	err = s.svc.Experiments.SetNotes(r.Context(), actorFrom(r), e.ID, notes)
	n := views.ExperimentNotes{ExperimentID: e.ID, Source: notes, HTML: markdown.ToHTML(notes), CanChange: true}
	switch resolute.ErrorCode(err) {
	case "":
		if !isHTMX(r) {
			redirect(w, r, experimentPath(e.ID)+"?tab=notes", "ok", "Saved the notes.")
			return
		}
		s.render(w, r, http.StatusOK, views.ExperimentNotesView(n))
	case resolute.EInvalid:
		n.HTML, n.Editing, n.Errors = markdown.ToHTML(e.Notes), true, views.FormErrors{"notes": resolute.ErrorMessage(err)}
		if isHTMX(r) {
			s.render(w, r, http.StatusBadRequest, views.ExperimentNotesView(n))
			return
		}
		p, perr := s.experimentPage(r, e, "notes")
		if perr != nil {
			s.error(w, r, perr)
			return
		}
		p.Notes = &n
		clearFlash(w, r)
		s.render(w, r, http.StatusBadRequest, views.ExperimentView(p))
	default:
		s.error(w, r, err)
	}
}

// handleExperimentLabelForm serves POST /experiments/{id}/labels/add and
// /labels/remove (label): the header's labels, edited in place.
func (s *Server) handleExperimentLabelForm(add bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		e, err := s.editableExperiment(r)
		if err != nil {
			s.error(w, r, err)
			return
		}
		label := strings.TrimSpace(r.PostFormValue("label"))
		change := s.svc.Experiments.RemoveLabel
		if add {
			change = s.svc.Experiments.AddLabel
		}
		labels, err := change(r.Context(), actorFrom(r), e.ID, label)
		if err != nil {
			labels = e.Labels
		}
		ed := s.experimentEdit(e)
		ed.Labels = labels
		switch resolute.ErrorCode(err) {
		case "":
			if !isHTMX(r) {
				redirect(w, r, experimentPath(e.ID), "ok", "Saved the labels.")
				return
			}
			s.render(w, r, http.StatusOK, views.ExperimentLabelsBody(ed, true))
		case resolute.EInvalid:
			ed.Label, ed.Errors = r.PostFormValue("label"), views.FormErrors{"label": resolute.ErrorMessage(err)}
			s.renderEditRefused(w, r, e, ed, views.ExperimentLabelsBody(ed, true))
		default:
			s.error(w, r, err)
		}
	}
}

// renderEditRefused answers a refused header edit with 400: htmx gets the
// editor's fragment, a plain post the whole page with the error beside the
// field.
func (s *Server) renderEditRefused(w http.ResponseWriter, r *http.Request, e resolute.Experiment, ed views.ExperimentEdit, fragment templ.Component) {
	if isHTMX(r) {
		s.render(w, r, http.StatusBadRequest, fragment)
		return
	}
	p, err := s.experimentPage(r, e, views.ExperimentTabs[0].Key)
	if err != nil {
		s.error(w, r, err)
		return
	}
	p.Live.Edit = ed
	clearFlash(w, r)
	s.render(w, r, http.StatusBadRequest, views.ExperimentView(p))
}

// handleExperimentSchedulingForm serves POST /experiments/{id}/scheduling
// (priority, weight, max_slots): what the Job Queue edits, from the
// experiment's header. Empty priority and weight stay as they are; an empty
// max_slots means no limit.
func (s *Server) handleExperimentSchedulingForm(w http.ResponseWriter, r *http.Request) {
	e, err := s.editableExperiment(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	sched, err := readSchedulingForm(r)
	if err == nil {
		var changed resolute.Experiment
		if changed, err = s.svc.Experiments.SetScheduling(r.Context(), actorFrom(r), e.ID, sched); err == nil {
			e = changed
		}
	}
	ed := s.experimentEdit(e)
	switch resolute.ErrorCode(err) {
	case "":
		if !isHTMX(r) {
			redirect(w, r, experimentPath(e.ID), "ok", "Saved the scheduling.")
			return
		}
		ed.Errors = views.FormErrors{"ok": "Saved."}
		s.render(w, r, http.StatusOK, views.ExperimentSchedulingBody(ed, true))
	case resolute.EConflict:
		if !isHTMX(r) {
			s.error(w, r, err)
			return
		}
		// A form kept in a page from before the experiment ended.
		ed.Errors = views.FormErrors{"state": resolute.ErrorMessage(err)}
		s.render(w, r, http.StatusConflict, views.ExperimentSchedulingBody(ed, true))
	case resolute.EInvalid:
		msg := resolute.ErrorMessage(err)
		field, _, _ := strings.Cut(msg, ":")
		if field != "priority" && field != "weight" && field != "max_slots" {
			field = "priority"
		}
		ed.Priority, ed.Weight, ed.MaxSlots = r.PostFormValue("priority"), r.PostFormValue("weight"), r.PostFormValue("max_slots")
		ed.Errors = views.FormErrors{field: msg}
		s.renderEditRefused(w, r, e, ed, views.ExperimentSchedulingBody(ed, true))
	default:
		s.error(w, r, err)
	}
}

// readSchedulingForm reads and checks the scheduling form: empty priority
// and weight stay as they are, an empty max_slots means no limit.
func readSchedulingForm(r *http.Request) (control.Scheduling, error) {
	var sched control.Scheduling
	if v := strings.TrimSpace(r.PostFormValue("priority")); v != "" {
		p, err := strconv.Atoi(v)
		if err != nil || p < 1 || p > 99 {
			return sched, resolute.Errorf(resolute.EInvalid, "priority: expected a whole number from 1 to 99, got %q", v)
		}
		sched.Priority = &p
	}
	if v := strings.TrimSpace(r.PostFormValue("weight")); v != "" {
		wt, err := strconv.ParseFloat(v, 64)
		if err != nil || !(wt > 0) || wt > 1e6 {
			return sched, resolute.Errorf(resolute.EInvalid, "weight: expected a number more than 0, got %q", v)
		}
		sched.Weight = &wt
	}
	if v := strings.TrimSpace(r.PostFormValue("max_slots")); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return sched, resolute.Errorf(resolute.EInvalid, "max_slots: expected a whole number of at least 1, or nothing for no limit; got %q", v)
		}
		sched.MaxSlots = &n
	}
	return sched, nil
}
