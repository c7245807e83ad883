// Package storage reads and deletes the files of checkpoints where an
// experiment's checkpoint_storage keeps them: a directory on this machine
// (shared_fs, directory), an S3 or S3-compatible bucket (MinIO), a Google
// Cloud Storage bucket, or an Azure Blob Storage container.
//
// A checkpoint is a prefix: its UUID, under the storage's own prefix (or
// directory). The master lists, streams and deletes checkpoints through the
// one small interface Store; New picks the backend from the config. The
// clouds' credentials come from the config when it gives them, else from
// the SDKs' default chains (environment, shared files, instance or pod
// identity), exactly as the clouds' own tools find them.
//
// It must not decide which checkpoints to delete (control/gc.go does), nor
// who may read them (control and authz do); it never logs, and its errors
// name the bucket and the cause but never a secret.
package storage
