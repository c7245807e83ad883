package handlers

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/control"
	"github.com/resolute-ml/resolute/db"
	"github.com/resolute-ml/resolute/views"
)

// experimentsPerPage is the length of a page of an experiment list.
const experimentsPerPage = 50

// maxSearchLen bounds the list's text filter.
const maxSearchLen = 200

// handleExperimentListPage serves GET /experiments[?q=&state=&user=&label=
// &archived=1&sort=&order=&page=]: every experiment, filtered, sorted and
// paged; htmx requests for #experiment-table get the table alone.
func (s *Server) handleExperimentListPage(w http.ResponseWriter, r *http.Request) {
	b, ok := s.experimentBrowser(w, r, views.ExperimentQuery{Path: "/experiments"})
	if !ok {
		return
	}
	s.page(w, r, views.ExperimentListPage(views.ExperimentList{Shell: s.shell(r, "Experiments", "experiments"), Browser: b}))
}

// handleExperimentTable serves GET /experiments/table[?project=&workspace=
// &…the list's query]: the fragment htmx fetches again when experiments
// change (GET /events).
func (s *Server) handleExperimentTable(w http.ResponseWriter, r *http.Request) {
	q := views.ExperimentQuery{Path: "/experiments"}
	var err error
	if v := r.URL.Query().Get("project"); v != "" {
		if q.ProjectID, err = positiveID("project", v); err == nil {
			q.Path = "/projects/" + v
		}
	} else if v := r.URL.Query().Get("workspace"); v != "" {
		if q.WorkspaceID, err = positiveID("workspace", v); err == nil {
			q.Path = "/workspaces/" + v
		}
	}
	if err == nil {
		err = readExperimentQuery(r.URL.Query(), &q)
	}
	var t views.ExperimentTable
	if err == nil {
		t, err = s.experimentTable(r, q)
	}
	if err != nil {
		s.error(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, views.ExperimentTableView(t))
}

// experimentBrowser reads a list's query over scope and loads it with the
// filter's choices. It answers the request itself, and returns false, on
// bad input (400 naming the parameter), on htmx requests for the table
// (the fragment, with the page's URL to push) and on URLs that are not
// canonical (a redirect, e.g. after a GET form sent empty fields).
func (s *Server) experimentBrowser(w http.ResponseWriter, r *http.Request, scope views.ExperimentQuery) (views.ExperimentBrowser, bool) {
	var b views.ExperimentBrowser
	q := scope
	err := readExperimentQuery(r.URL.Query(), &q)
	if err == nil {
		b.Table, err = s.experimentTable(r, q)
	}
	if err != nil {
		s.error(w, r, err)
		return b, false
	}
	if r.Header.Get("HX-Request") == "true" && r.Header.Get("HX-Target") == "experiment-table" && r.Header.Get("HX-History-Restore-Request") == "" {
		w.Header().Set("HX-Push-Url", q.URL())
		s.render(w, r, http.StatusOK, views.ExperimentTableView(b.Table))
		return b, false
	}
	if canonical := q.Values().Encode(); r.URL.RawQuery != canonical {
		http.Redirect(w, r, q.URL(), http.StatusSeeOther)
		return b, false
	}
	if err := s.experimentChoices(r, &b); err != nil {
		s.error(w, r, err)
		return b, false
	}
	return b, true
}

// defaultExperimentBrowser is the first page of the list over scope, newest
// first, for pages that show it beside a form they re-render.
func (s *Server) defaultExperimentBrowser(r *http.Request, scope views.ExperimentQuery) (views.ExperimentBrowser, error) {
	var b views.ExperimentBrowser
	q := scope
	err := readExperimentQuery(url.Values{}, &q)
	if err == nil {
		b.Table, err = s.experimentTable(r, q)
	}
	if err == nil {
		err = s.experimentChoices(r, &b)
	}
	return b, err
}

// experimentChoices loads the choices of the list's filter and of the move
// action.
func (s *Server) experimentChoices(r *http.Request, b *views.ExperimentBrowser) error {
	users, err := s.db.Users(r.Context())
	if err == nil {
		b.Labels, err = s.db.ExperimentLabels(r.Context())
	}
	if err == nil {
		b.Projects, err = s.db.Projects(r.Context(), db.ProjectFilter{Archived: new(false), Viewer: viewer(r, authz.ViewProject)})
	}
	for _, u := range users {
		b.Users = append(b.Users, u.Username)
	}
	return err
}

// readExperimentQuery reads a list's filter, order and page from v into q;
// a bad value is invalid, naming its parameter.
func readExperimentQuery(v url.Values, q *views.ExperimentQuery) error {
	q.State = strings.ToUpper(v.Get("state"))
	if q.State != "" && !slices.Contains(views.ExperimentStates, q.State) {
		return resolute.Errorf(resolute.EInvalid, "state: unknown state %q", v.Get("state"))
	}
	q.User, q.Label, q.Search = v.Get("user"), v.Get("label"), strings.TrimSpace(v.Get("q"))
	if len(q.Search) > maxSearchLen {
		return resolute.Errorf(resolute.EInvalid, "q: longer than %d bytes", maxSearchLen)
	}
	switch a := v.Get("archived"); a {
	case "", "0", "false":
	case "1", "true", "on":
		q.Archived = true
	default:
		return resolute.Errorf(resolute.EInvalid, "archived: expected 1 or 0, got %q", a)
	}
	q.Sort = v.Get("sort")
	if q.Sort == "" {
		q.Sort = "id"
	}
	if !slices.Contains(db.ExperimentSorts, q.Sort) {
		return resolute.Errorf(resolute.EInvalid, "sort: unknown column %q; sort by %s", q.Sort, strings.Join(db.ExperimentSorts, ", "))
	}
	switch o := v.Get("order"); o {
	case "":
		q.Desc = views.DescendingFirst[q.Sort]
	case "asc", "desc":
		q.Desc = o == "desc"
	default:
		return resolute.Errorf(resolute.EInvalid, "order: expected asc or desc, got %q", o)
	}
	if err := readExperimentColumns(v, q); err != nil {
		return err
	}
	q.Page = 1
	if p := v.Get("page"); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 {
			return resolute.Errorf(resolute.EInvalid, "page: expected a positive integer, got %q", p)
		}
		q.Page = n
	}
	return nil
}

// readExperimentColumns reads the list's chosen columns: the column
// chooser's check boxes (col, one per column) or the URL's cols (comma
// separated); neither is the default columns. They are kept in table order.
func readExperimentColumns(v url.Values, q *views.ExperimentQuery) error {
	chosen := v["col"]
	if len(chosen) == 0 && v.Get("cols") != "" {
		chosen = strings.Split(v.Get("cols"), ",")
	}
	if len(chosen) == 0 {
		return nil
	}
	for _, c := range chosen {
		if !slices.Contains(views.ChoosableColumns, c) {
			return resolute.Errorf(resolute.EInvalid, "cols: unknown column %q; choose from %s", c, strings.Join(views.ChoosableColumns, ", "))
		}
	}
	q.Columns = []string{}
	for _, c := range views.ChoosableColumns {
		if slices.Contains(chosen, c) {
			q.Columns = append(q.Columns, c)
		}
	}
	return nil
}

// experimentTable loads the page of experiments q asks for.
func (s *Server) experimentTable(r *http.Request, q views.ExperimentQuery) (views.ExperimentTable, error) {
	t := views.ExperimentTable{Query: q, PerPage: experimentsPerPage}
	f := db.ExperimentListFilter{Username: q.User, Label: q.Label, Search: q.Search, Sort: q.Sort, Descending: q.Desc,
		Limit: experimentsPerPage, Offset: (q.Page - 1) * experimentsPerPage}
	if q.ProjectID != 0 {
		f.ProjectID = &q.ProjectID
	}
	if q.WorkspaceID != 0 {
		f.WorkspaceID = &q.WorkspaceID
	}
	if !q.Archived {
		f.Archived = new(false)
	}
	if q.State != "" {
		f.States = []string{q.State}
	}
	f.Viewer = viewer(r, authz.ViewExperiment)
	list, total, err := s.db.ExperimentPage(r.Context(), f)
	if err != nil {
		return t, err
	}
	t.Total = total
	for _, e := range list {
		t.Rows = append(t.Rows, s.experimentRow(e))
	}
	return t, nil
}

// experimentRow is a listed experiment as the list and dashboard show it.
func (s *Server) experimentRow(e db.ListedExperiment) views.ExperimentRow {
	return views.ExperimentRow{Experiment: e.Experiment, Searcher: e.Searcher, Metric: e.Metric,
		SmallerIsBetter: e.SmallerIsBetter, Duration: s.duration(e.CreatedAt, e.EndedAt)}
}

// positiveID reads an id given as the value v of name (a URL parameter, a
// query or form field).
func positiveID(name, v string) (int64, error) {
	id, err := strconv.ParseInt(v, 10, 64)
	if err != nil || id <= 0 {
		return 0, resolute.Errorf(resolute.EInvalid, "%s: expected a positive integer, got %q", name, v)
	}
	return id, nil
}

// batchActions are what POST /experiments/batch does, with the word its
// report uses.
var batchActions = map[string]string{"activate": "Activated", "pause": "Paused", "cancel": "Canceling",
	"kill": "Killing", "archive": "Archived", "unarchive": "Unarchived", "move": "Moved", "compare": "", "tensorboard": ""}

// handleExperimentBatchForm serves POST /experiments/batch (action,
// experiments, project_id for move, back): an action on every ticked
// experiment, then back to the list with what was done and, per
// experiment, what was refused. compare opens the compare page and
// tensorboard launches one TensorBoard over them.
func (s *Server) handleExperimentBatchForm(w http.ResponseWriter, r *http.Request) {
	if err := parseForm(r); err != nil {
		s.error(w, r, err)
		return
	}
	back := r.PostFormValue("back")
	if !resolute.LocalPath(back) {
		back = "/experiments"
	}
	action := r.PostFormValue("action")
	done, known := batchActions[action]
	if !known {
		s.error(w, r, resolute.Errorf(resolute.EInvalid, "action: unknown batch action %q", action))
		return
	}
	var ids []int64
	for _, v := range r.PostForm["experiments"] {
		for _, f := range strings.Split(v, ",") {
			id, err := positiveID("experiments", strings.TrimSpace(f))
			if err != nil {
				s.error(w, r, err)
				return
			}
			if !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
	}
	switch {
	case len(ids) == 0:
		redirect(w, r, back, "error", "Tick the experiments to "+action+" first.")
		return
	case action == "compare" && len(ids) < 2:
		redirect(w, r, back, "error", "Tick at least two experiments to compare.")
		return
	case action == "compare":
		redirect(w, r, comparePath("experiments", ids), "", "")
		return
	case action == "tensorboard":
		first, err := s.db.Experiment(r.Context(), ids[0])
		if err != nil {
			s.taskFormDone(w, r, err, back, "")
			return
		}
		s.launchTaskForm(w, r, control.TaskRequest{Type: resolute.TaskTensorBoard, ExperimentIDs: ids, ProjectID: first.ProjectID},
			back, tensorBoardLaunched)
		return
	}
	var projectID int64
	if action == "move" {
		var err error
		if projectID, err = positiveID("project_id", r.PostFormValue("project_id")); err != nil {
			redirect(w, r, back, "error", "Choose the project to move the experiments to.")
			return
		}
	}
	var okIDs []int64
	var refusals []string
	forbidden := 0
	for _, id := range ids {
		if err := s.batchOne(r, id, action, projectID); err != nil {
			if resolute.ErrorCode(err) == resolute.EForbidden {
				forbidden++
			}
			msg := resolute.ErrorMessage(err)
			if resolute.ErrorCode(err) == resolute.EInternal {
				s.logger.Error("batch action failed", "action", action, "experiment", id, "err", err)
			}
			refusals = append(refusals, fmt.Sprintf("experiment %d: %s", id, msg))
			continue
		}
		okIDs = append(okIDs, id)
	}
	if forbidden == len(ids) { // none of them was the requester's to change
		s.error(w, r, resolute.Errorf(resolute.EForbidden, "%s", batchReport(action, done, okIDs, len(ids), refusals)))
		return
	}
	redirect(w, r, back, batchKind(refusals), batchReport(action, done, okIDs, len(ids), refusals))
}

// batchOne applies a batch action to one experiment, with the rules of the
// experiment's own buttons.
func (s *Server) batchOne(r *http.Request, id int64, action string, projectID int64) error {
	ctx, a := r.Context(), actorFrom(r)
	switch action {
	case "archive", "unarchive":
		return s.svc.Experiments.SetArchived(ctx, a, id, action == "archive")
	case "move":
		return s.svc.Experiments.Move(ctx, a, id, projectID)
	}
	return s.svc.Experiments.SetState(ctx, a, id, action)
}

func batchKind(refusals []string) string {
	if len(refusals) > 0 {
		return "error"
	}
	return "ok"
}

// batchReport says what a batch action did and, one by one, what it could
// not do; a long list is cut short (the message travels in a cookie).
func batchReport(action, done string, ok []int64, total int, refusals []string) string {
	var b strings.Builder
	if len(ok) > 0 {
		ids := make([]string, len(ok))
		for i, id := range ok {
			ids[i] = itoa(id)
		}
		fmt.Fprintf(&b, "%s %d of %d experiments (%s).", done, len(ok), total, strings.Join(ids, ", "))
	} else {
		fmt.Fprintf(&b, "Could not %s any of the %d experiments.", action, total)
	}
	for i, r := range refusals {
		if b.Len() > 1200 {
			fmt.Fprintf(&b, " And %d more refused.", len(refusals)-i)
			break
		}
		b.WriteString(" Refused " + r + ".")
	}
	return b.String()
}
