package handlers

import (
	"archive/tar"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/contextdir"
	"github.com/resolute-ml/resolute/expconf"
	"github.com/resolute-ml/resolute/views"
)

// handleExperimentValidateForm serves POST /experiments/new/validate (yaml,
// template; urlencoded or multipart): the new-experiment form checks its
// config as it is typed, with the same expansion and validation as
// creating it. A valid config answers 200 with what the search will do; an
// invalid one 422 with each problem's key path and message.
func (s *Server) handleExperimentValidateForm(w http.ResponseWriter, r *http.Request) {
	err := r.ParseMultipartForm(1 << 20)
	if errors.Is(err, http.ErrNotMultipart) {
		err = parseForm(r)
	} else if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			err = resolute.Errorf(resolute.ETooLarge, "form is larger than %d bytes", tooBig.Limit)
		} else {
			err = resolute.Errorf(resolute.EInvalid, "malformed form: %v", err)
		}
	}
	if err != nil {
		s.error(w, r, err)
		return
	}
	if _, ok := r.PostForm["yaml"]; !ok {
		s.error(w, r, resolute.Errorf(resolute.EInvalid, "yaml: required: the config to check"))
		return
	}
	yaml, template := r.PostFormValue("yaml"), r.PostFormValue("template")
	if strings.TrimSpace(yaml) == "" {
		s.render(w, r, http.StatusOK, views.ConfigCheckView(views.ConfigCheck{Empty: true}))
		return
	}
	c := views.ConfigCheck{}
	cfg, plan, err := s.configs.PreviewSearch(r.Context(), []byte(yaml), template, nil)
	switch code := resolute.ErrorCode(err); code {
	case "":
		c.Summary = fmt.Sprintf("Valid: %s searcher on %s, %d trial(s).", plan.Searcher, plan.Metric, plan.Trials)
		if cfg.Name != "" {
			c.Summary = fmt.Sprintf("Valid: %q, %s searcher on %s, %d trial(s).", cfg.Name, plan.Searcher, plan.Metric, plan.Trials)
		}
		s.render(w, r, http.StatusOK, views.ConfigCheckView(c))
	case resolute.EInvalid, resolute.ENotFound:
		c.Problems = configProblems(err, template)
		s.render(w, r, http.StatusUnprocessableEntity, views.ConfigCheckView(c))
	default:
		s.error(w, r, err)
	}
}

// configProblems lists a config's errors with their key paths: expconf's
// field errors, or one message (YAML syntax, an unknown template).
func configProblems(err error, template string) []views.ConfigProblem {
	var fe expconf.Errors
	if errors.As(err, &fe) {
		out := make([]views.ConfigProblem, len(fe))
		for i, e := range fe {
			out[i] = views.ConfigProblem{Path: e.Path, Message: e.Message, Line: e.Line}
		}
		return out
	}
	msg := resolute.ErrorMessage(err)
	if template != "" && strings.HasPrefix(msg, "template ") {
		return []views.ConfigProblem{{Path: "template", Message: msg}}
	}
	var out []views.ConfigProblem
	for _, line := range strings.Split(msg, "\n") {
		p := views.ConfigProblem{Message: line}
		if path, rest, ok := strings.Cut(line, ": "); ok && !strings.ContainsAny(path, " \t") {
			p.Path, p.Message = path, rest
		}
		out = append(out, p)
	}
	return out
}

// archiveFile is one file uploaded on its own as part of the code.
type archiveFile struct {
	name string
	data *contextdir.File
}

// packFiles packs files uploaded one by one (a multiple file input) as the
// tar.gz experiments store, each at the top of the context directory under
// the base name the browser gave, in a temporary file of u.
func packFiles(u *upload, files []archiveFile) (*contextdir.File, error) {
	out, err := u.create()
	if err != nil {
		return nil, err
	}
	p := contextdir.NewPacker(out)
	for _, f := range files {
		h := &tar.Header{Typeflag: tar.TypeReg, Name: f.name, Mode: 0o644, Size: f.data.Size()}
		if err := p.Add(h, contextdir.Reader(f.data)); err != nil {
			return nil, err
		}
	}
	if err := p.Close(); err != nil {
		return nil, err
	}
	return out, nil
}
