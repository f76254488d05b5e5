package trust

import (
	"flag"
	"os"
	"strconv"
)

// RegisterFlags adds -tls-cert, -tls-key, -tls-ca and -insecure to fs,
// each defaulting to its environment variable (CHEMMY_TLS_CERT,
// CHEMMY_TLS_KEY, CHEMMY_TLS_CA, CHEMMY_INSECURE), and returns the Config
// they fill when fs is parsed.
func RegisterFlags(fs *flag.FlagSet) *Config {
	c := new(Config)
	fs.StringVar(&c.CertFile, "tls-cert", os.Getenv("CHEMMY_TLS_CERT"), "PEM certificate of this service (URI SAN spiffe://chemmy/<name>); re-read when it changes")
	fs.StringVar(&c.KeyFile, "tls-key", os.Getenv("CHEMMY_TLS_KEY"), "PEM private key of -tls-cert")
	fs.StringVar(&c.CAFile, "tls-ca", os.Getenv("CHEMMY_TLS_CA"), "PEM certificates of the suite's CA")
	insecure, _ := strconv.ParseBool(os.Getenv("CHEMMY_INSECURE"))
	fs.BoolVar(&c.Insecure, "insecure", insecure, "development only: plaintext gRPC, caller identity from metadata (logs a warning)")
	return c
}
