package resolute

import "time"

// Built-in accounts that exist on every new cluster (seeds: "Default Password").
const (
	AdminUsername      = "admin"
	DeterminedUsername = "determined"
)

// User is a person (or script) who can log in.
type User struct {
	ID          int64     `json:"id"`
	Username    string    `json:"username"`
	DisplayName string    `json:"displayName"`
	Admin       bool      `json:"admin"`
	Active      bool      `json:"active"`
	HasPassword bool      `json:"hasPassword"`
	CreatedAt   time.Time `json:"createdAt"`
}

// Session is a logged-in user's session. The token itself is only ever seen by
// the client; the database keeps its hash.
type Session struct {
	ID        int64     `json:"id"`
	UserID    int64     `json:"userId"`
	ExpiresAt time.Time `json:"expiresAt"`
}
