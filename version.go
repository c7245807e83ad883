package resolute

// Version is this build's version; the build sets it with
// -ldflags "-X github.com/resolute-ml/resolute.Version=...".
var Version = "0.1.0-dev"
