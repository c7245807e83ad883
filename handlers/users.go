package handlers

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/views"
)

// handleAPIUserList serves GET /api/v1/users.
func (s *Server) handleAPIUserList(w http.ResponseWriter, r *http.Request) {
	users, err := s.db.Users(r.Context())
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resolute.UsersResponse{Users: users})
}

// handleAPIUserGet serves GET /api/v1/users/{id}.
func (s *Server) handleAPIUserGet(w http.ResponseWriter, r *http.Request) {
	id, err := idParam(r, "id")
	if err != nil {
		s.error(w, r, err)
		return
	}
	u, err := s.db.User(r.Context(), id)
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resolute.UserResponse{User: u})
}

// handleAPIUserByName serves GET /api/v1/users/{username}/by-username.
func (s *Server) handleAPIUserByName(w http.ResponseWriter, r *http.Request) {
	named, err := s.db.UserByUsername(r.Context(), chi.URLParam(r, "username"))
	if err != nil {
		s.error(w, r, err)
		return
	}
	u, err := s.db.User(r.Context(), named.ID) // with the linked agent user
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resolute.UserResponse{User: u})
}

// handleAPIUserCreate serves POST /api/v1/users (administrators).
func (s *Server) handleAPIUserCreate(w http.ResponseWriter, r *http.Request) {
	var req resolute.CreateUserRequest
	if err := decodeJSON(r, &req); err != nil {
		s.error(w, r, err)
		return
	}
	u, err := s.svc.Users.Create(r.Context(), actorFrom(r), req.User, req.Password)
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resolute.UserResponse{User: u})
}

// handleAPIUserPatch serves PATCH /api/v1/users/{id} (administrators).
func (s *Server) handleAPIUserPatch(w http.ResponseWriter, r *http.Request) {
	var req resolute.PatchUserRequest
	id, err := idAndJSON(r, &req)
	if err != nil {
		s.error(w, r, err)
		return
	}
	u, err := s.svc.Users.Edit(r.Context(), actorFrom(r), id, req)
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resolute.UserResponse{User: u})
}

// handleAPIUserPassword serves POST /api/v1/users/{id}/password. The body is
// {"password": ..., "oldPassword": ...} or, as Determined's CLI sends it, a
// bare JSON string (accepted for administrators resetting a password).
func (s *Server) handleAPIUserPassword(w http.ResponseWriter, r *http.Request) {
	var raw json.RawMessage
	id, err := idAndJSON(r, &raw)
	if err != nil {
		s.error(w, r, err)
		return
	}
	var req resolute.SetPasswordRequest
	var body struct {
		Password    *string `json:"password"`
		OldPassword string  `json:"oldPassword"`
	}
	switch raw[0] {
	case '"':
		err = json.Unmarshal(raw, &req.Password)
	case '{':
		if err = decodeBody(raw, &body); err == nil && body.Password == nil {
			err = resolute.Errorf(resolute.EInvalid, "password: expected a string")
		} else if err == nil {
			req = resolute.SetPasswordRequest{Password: *body.Password, OldPassword: body.OldPassword}
		}
	default:
		err = resolute.Errorf(resolute.EInvalid, "expected {\"password\": ...}")
	}
	if err != nil {
		s.error(w, r, err)
		return
	}
	if err := s.svc.Users.SetPassword(r.Context(), actorFrom(r), id, req, tokenFrom(r)); err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, struct{}{})
}

// handleUserListPage serves GET /admin/users.
func (s *Server) handleUserListPage(w http.ResponseWriter, r *http.Request) {
	s.renderUserList(w, r, http.StatusOK, views.UserForm{})
}

func (s *Server) renderUserList(w http.ResponseWriter, r *http.Request, status int, form views.UserForm) {
	users, err := s.db.Users(r.Context())
	if err != nil {
		s.error(w, r, err)
		return
	}
	clearFlash(w, r)
	s.render(w, r, status, views.UserListPage(views.UserList{Shell: s.shell(r, "Users", "admin"), Users: users, Form: form}))
}

// handleUserCreateForm serves POST /admin/users.
func (s *Server) handleUserCreateForm(w http.ResponseWriter, r *http.Request) {
	if err := parseForm(r); err != nil {
		s.error(w, r, err)
		return
	}
	spec := resolute.UserSpec{Username: strings.TrimSpace(r.PostFormValue("username")),
		DisplayName: strings.TrimSpace(r.PostFormValue("display_name")), Admin: r.PostFormValue("admin") != ""}
	u, err := s.svc.Users.Create(r.Context(), actorFrom(r), spec, r.PostFormValue("password"))
	if code := resolute.ErrorCode(err); code == resolute.EInvalid || code == resolute.EConflict {
		field := "username"
		if strings.HasPrefix(resolute.ErrorMessage(err), "password") {
			field = "password"
		} else if strings.HasPrefix(resolute.ErrorMessage(err), "displayName") {
			field = "display_name"
		}
		form := views.UserForm{Username: spec.Username, DisplayName: spec.DisplayName, Admin: spec.Admin,
			Errors: views.FormErrors{field: fieldMessage(err)}}
		s.renderUserList(w, r, http.StatusUnprocessableEntity, form)
		return
	} else if err != nil {
		s.error(w, r, err)
		return
	}
	redirect(w, r, "/admin/users", "ok", "Created user "+u.Username+".")
}

// handleUserEditPage serves GET /admin/users/{id}.
func (s *Server) handleUserEditPage(w http.ResponseWriter, r *http.Request) {
	id, err := idParam(r, "id")
	if err != nil {
		s.error(w, r, err)
		return
	}
	u, err := s.db.User(r.Context(), id)
	if err != nil {
		s.error(w, r, err)
		return
	}
	s.renderUserPage(w, r, http.StatusOK, u, agentFormOf(u.AgentUserGroup), nil)
}

// handleUserEditForm serves POST /admin/users/{id}.
func (s *Server) handleUserEditForm(w http.ResponseWriter, r *http.Request) {
	id, err := idAndForm(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	display := strings.TrimSpace(r.PostFormValue("display_name"))
	u, err := s.db.User(r.Context(), id)
	if err != nil {
		s.error(w, r, err)
		return
	}
	admin, active := r.PostFormValue("admin") != "", r.PostFormValue("active") != ""
	_, err = s.svc.Users.Edit(r.Context(), actorFrom(r), id, resolute.PatchUserRequest{DisplayName: &display, Admin: &admin, Active: &active})
	if code := resolute.ErrorCode(err); code == resolute.EInvalid || code == resolute.EConflict {
		u.DisplayName = display
		s.renderUserPage(w, r, http.StatusUnprocessableEntity, u, agentFormOf(u.AgentUserGroup), views.FormErrors{"form": resolute.ErrorMessage(err)})
		return
	} else if err != nil {
		s.error(w, r, err)
		return
	}
	redirect(w, r, "/admin/users", "ok", "Saved user "+u.Username+".")
}

// handleUserPasswordForm serves POST /admin/users/{id}/password.
func (s *Server) handleUserPasswordForm(w http.ResponseWriter, r *http.Request) {
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
	me, _ := userFrom(r)
	if me.ID == id {
		redirect(w, r, "/account", "error", "Change your own password here, with your current one.")
		return
	}
	if err := s.svc.Users.SetPassword(r.Context(), actorFrom(r), id, resolute.SetPasswordRequest{Password: r.PostFormValue("password")}, tokenFrom(r)); err != nil {
		if resolute.ErrorCode(err) == resolute.EInvalid {
			s.renderUserPage(w, r, http.StatusUnprocessableEntity, u, agentFormOf(u.AgentUserGroup), views.FormErrors{"password": fieldMessage(err)})
			return
		}
		s.error(w, r, err)
		return
	}
	redirect(w, r, "/admin/users", "ok", "Set the password of "+u.Username+".")
}

// handleAccountPage serves GET /account.
func (s *Server) handleAccountPage(w http.ResponseWriter, r *http.Request) {
	s.page(w, r, views.AccountPage(views.Account{Shell: s.shell(r, "Account", "")}))
}

// handleAccountPasswordForm serves POST /account/password.
func (s *Server) handleAccountPasswordForm(w http.ResponseWriter, r *http.Request) {
	if err := parseForm(r); err != nil {
		s.error(w, r, err)
		return
	}
	me, _ := userFrom(r)
	newPass := r.PostFormValue("new_password")
	errs := views.FormErrors{}
	if newPass != r.PostFormValue("confirm") {
		errs["confirm"] = "does not match the new password"
	} else if err := s.svc.Users.SetPassword(r.Context(), actorFrom(r), me.ID,
		resolute.SetPasswordRequest{Password: newPass, OldPassword: r.PostFormValue("old_password")}, tokenFrom(r)); err != nil {
		if resolute.ErrorCode(err) != resolute.EInvalid {
			s.error(w, r, err)
			return
		}
		if strings.HasPrefix(resolute.ErrorMessage(err), "oldPassword") {
			errs["old_password"] = fieldMessage(err)
		} else {
			errs["new_password"] = fieldMessage(err)
		}
	}
	if len(errs) > 0 {
		s.render(w, r, http.StatusUnprocessableEntity, views.AccountPage(views.Account{Shell: s.shell(r, "Account", ""), Errors: errs}))
		return
	}
	redirect(w, r, "/account", "ok", "Your password was changed.")
}
