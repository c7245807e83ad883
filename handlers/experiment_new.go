package handlers

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
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
	cfg, plan, err := s.configs.PreviewSearch(r.Context(), actorFrom(r), []byte(yaml), template, nil)
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

// filePacker packs files uploaded one by one (a multiple file input) into
// the tar.gz experiments store as they arrive, each at the top of the
// context directory under the base name the browser gave. A tar entry
// needs its size before its bytes, so each file goes first to one scratch
// file, used again for the next: a request holds two temporary files
// however many it sends.
type filePacker struct {
	u       *upload
	scratch *contextdir.File
	out     *contextdir.File
	p       *contextdir.Packer
	bytes   int64 // of the files packed
}

// add packs the file name, read from r, once the request holds a slot.
func (fp *filePacker) add(ctx context.Context, name string, r io.Reader) error {
	if fp.p == nil {
		err := fp.u.enter(ctx)
		if err == nil {
			fp.scratch, err = fp.u.create()
		}
		if err == nil {
			fp.out, err = fp.u.create()
		}
		if err != nil {
			return err
		}
		fp.p = contextdir.NewPacker(fp.out)
	}
	err := fill(fp.scratch, r, contextdir.MaxArchiveBytes-fp.bytes)
	if resolute.ErrorCode(err) == resolute.ETooLarge {
		return resolute.Errorf(resolute.ETooLarge, "code: the files are larger than 96 MiB together")
	} else if err != nil {
		return err
	}
	fp.bytes += fp.scratch.Size()
	h := &tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: fp.scratch.Size()}
	return fp.p.Add(h, contextdir.Reader(fp.scratch))
}

// close ends the archive and returns it, nil when no file came.
func (fp *filePacker) close() (*contextdir.File, error) {
	if fp.p == nil {
		return nil, nil
	}
	fp.scratch.Close()
	if err := fp.p.Close(); err != nil {
		return nil, err
	}
	return fp.out, nil
}
