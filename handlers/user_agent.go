package handlers

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/views"
)

// The administrators' form that links a user to the Unix user and group
// their tasks run as: the same service method as PATCH /api/v1/users/{id}
// with agentUserGroup.

// agentFields are the service's field names as the form names them.
var agentFields = map[string]string{"agentUid": "agent_uid", "agentGid": "agent_gid", "agentUser": "agent_user", "agentGroup": "agent_group"}

// renderUserPage renders an administrator's page of user u with the agent
// user form's fields and errors.
func (s *Server) renderUserPage(w http.ResponseWriter, r *http.Request, status int, u resolute.User, agent views.AgentUserForm, errs views.FormErrors) {
	// An error (an id past the uid range) leaves it zero, shown as
	// nothing; the user's launches say why.
	runsAs, _ := s.svc.Users.TaskUser(u)
	if status == http.StatusOK {
		clearFlash(w, r)
	}
	s.render(w, r, status, views.UserEditPage(views.UserPage{Shell: s.shell(r, "User "+u.Username, "admin"), Target: u,
		Errors: errs, Agent: agent, RunsAs: runsAs}))
}

// agentFormOf is the agent user form of a link (empty for none).
func agentFormOf(g *resolute.AgentUserGroup) views.AgentUserForm {
	if g == nil {
		return views.AgentUserForm{}
	}
	return views.AgentUserForm{UID: strconv.Itoa(g.UID), GID: strconv.Itoa(g.GID), User: g.User, Group: g.Group}
}

// handleUserAgentForm serves POST /admin/users/{id}/agent-user: all four
// fields link the user, all four empty unlink them.
func (s *Server) handleUserAgentForm(w http.ResponseWriter, r *http.Request) {
	id, err := idAndForm(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	u, err := s.db.User(r.Context(), id)
	if err != nil {
		s.error(w, r, err)
		return
	}
	form := views.AgentUserForm{UID: strings.TrimSpace(r.PostFormValue("agent_uid")), GID: strings.TrimSpace(r.PostFormValue("agent_gid")),
		User: strings.TrimSpace(r.PostFormValue("agent_user")), Group: strings.TrimSpace(r.PostFormValue("agent_group"))}
	link, errs := parseAgentForm(form)
	if len(errs) == 0 {
		_, err = s.svc.Users.Edit(r.Context(), actorFrom(r), id, resolute.PatchUserRequest{AgentUserGroup: &link})
		switch {
		case resolute.ErrorCode(err) == resolute.EInvalid:
			msg := resolute.ErrorMessage(err)
			field, _, _ := strings.Cut(msg, ":")
			if name, ok := agentFields[field]; ok {
				errs = views.FormErrors{name: fieldMessage(err)}
			} else {
				errs = views.FormErrors{"form": msg}
			}
		case err != nil:
			s.error(w, r, err)
			return
		}
	}
	if len(errs) > 0 {
		s.renderUserPage(w, r, http.StatusUnprocessableEntity, u, form, errs)
		return
	}
	if link == (resolute.AgentUserGroup{}) {
		redirect(w, r, "/admin/users/"+strconv.FormatInt(id, 10), "ok", "Unlinked "+u.Username+": their tasks run as their own default ids.")
		return
	}
	redirect(w, r, "/admin/users/"+strconv.FormatInt(id, 10), "ok", "Linked "+u.Username+" to "+link.User+": their tasks run as it.")
}

// parseAgentForm reads the form's ids as numbers: all fields empty is the
// empty link (unlink); otherwise every field is required.
func parseAgentForm(f views.AgentUserForm) (resolute.AgentUserGroup, views.FormErrors) {
	var g resolute.AgentUserGroup
	if f == (views.AgentUserForm{}) {
		return g, nil
	}
	errs := views.FormErrors{}
	for _, id := range []struct {
		name, v string
		to      *int
	}{{"agent_uid", f.UID, &g.UID}, {"agent_gid", f.GID, &g.GID}} {
		n, err := strconv.Atoi(id.v)
		switch {
		case id.v == "":
			errs[id.name] = "is required (leave all four empty to unlink)"
		case err != nil:
			errs[id.name] = "must be a whole number, such as 1001"
		default:
			*id.to = n
		}
	}
	for _, name := range []struct{ name, v string }{{"agent_user", f.User}, {"agent_group", f.Group}} {
		if name.v == "" {
			errs[name.name] = "is required (leave all four empty to unlink)"
		}
	}
	g.User, g.Group = f.User, f.Group
	if len(errs) > 0 {
		return g, errs
	}
	return g, nil
}
