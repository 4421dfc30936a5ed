package piproto

// Version is the version of pi-proto this package belongs to: the repository's VERSION file, the
// name of the module archive (pi-proto-go-VERSION.tar.gz) and the tag go/vVERSION.
const Version = "0.2.0"
