// Package storagetest gives tests a fresh bucket on a real object store:
// an S3 bucket on MinIO, a GCS bucket on fake-gcs-server and an Azure blob
// container on Azurite. Each call makes a bucket with a unique name through
// the server's own API and removes it, with what it holds, when the test
// ends.
//
// The servers are the ones the environment names (RESOLUTE_TEST_S3_ENDPOINT,
// RESOLUTE_TEST_S3_ACCESS_KEY, RESOLUTE_TEST_S3_SECRET_KEY,
// RESOLUTE_TEST_GCS_ENDPOINT, RESOLUTE_TEST_AZURE_BLOB_ENDPOINT; `eval
// "$(scripts/objectstores.sh up)"` prints them), or else the ones this test
// process starts on first use with scripts/objectstores.sh, in a directory
// under os.TempDir that a watcher removes when the process ends, as
// k8s/k8stest does for the Kubernetes control plane. A test never skips for
// want of a server: it fails, saying why.
//
// The package talks to the servers with the standard library only (AWS
// Signature Version 4, GCS's JSON API, Azure's Shared Key), so that it does
// not pin the SDK versions of the code under test. It must not be imported
// outside tests.
package storagetest
