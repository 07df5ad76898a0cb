// Go database/sql + go-sql-driver/mysql over TLS to the proxy (tls=custom: a
// tls.Config trusting only the test CA, host name checked), run by tls_test.py
// against its own proxy (SP_TLS_PORT, SP_TLS_CA, SP_TLS_WRONG_CA). With
// tls=custom the driver refuses a server that does not offer TLS, so a login
// means the session is encrypted; a statement and a prepared statement run;
// a CA that did not sign the proxy's certificate is refused with a
// certificate error (the driver really verifies).
package main

import (
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"errors"
	"fmt"
	"os"

	"github.com/go-sql-driver/mysql"
)

var failed int

func check(ok bool, format string, args ...interface{}) {
	if !ok {
		failed++
		fmt.Printf("FAIL: "+format+"\n", args...)
	}
}

func must(err error, what string) {
	if err != nil {
		fmt.Printf("FAIL: %s: %v\n", what, err)
		os.Exit(1)
	}
}

func pool(path string) *x509.CertPool {
	pem, err := os.ReadFile(path)
	must(err, "read "+path)
	p := x509.NewCertPool()
	if !p.AppendCertsFromPEM(pem) {
		must(errors.New("no certificate"), path)
	}
	return p
}

func main() {
	port, ca, wrongCa := os.Getenv("SP_TLS_PORT"), os.Getenv("SP_TLS_CA"), os.Getenv("SP_TLS_WRONG_CA")
	if port == "" || ca == "" || wrongCa == "" {
		must(errors.New("SP_TLS_PORT, SP_TLS_CA and SP_TLS_WRONG_CA must be set (tls_test.py sets them)"), "environment")
	}
	must(mysql.RegisterTLSConfig("custom", &tls.Config{RootCAs: pool(ca), ServerName: "127.0.0.1"}), "register custom")
	must(mysql.RegisterTLSConfig("wrongca", &tls.Config{RootCAs: pool(wrongCa), ServerName: "127.0.0.1"}), "register wrongca")

	db, err := sql.Open("mysql", fmt.Sprintf("secure:secure_pw@tcp(127.0.0.1:%s)/im?tls=custom", port))
	must(err, "open")
	defer db.Close()
	var one int
	must(db.QueryRow("SELECT 1").Scan(&one), "SELECT 1 over TLS as a require_tls user")
	check(one == 1, "SELECT 1 gave %d", one)
	stmt, err := db.Prepare("SELECT ? + 1")
	must(err, "prepare over TLS")
	var two int
	must(stmt.QueryRow(1).Scan(&two), "execute over TLS")
	check(two == 2, "prepared SELECT ? + 1 gave %d", two)
	stmt.Close()

	plain, err := sql.Open("mysql", fmt.Sprintf("secure:secure_pw@tcp(127.0.0.1:%s)/im", port))
	must(err, "open plaintext")
	defer plain.Close()
	err = plain.Ping()
	var me *mysql.MySQLError
	check(errors.As(err, &me) && me.Number == 1045, "plaintext login of a require_tls user: want 1045, got %v", err)

	bad, err := sql.Open("mysql", fmt.Sprintf("app:app_pw@tcp(127.0.0.1:%s)/im?tls=wrongca", port))
	must(err, "open wrongca")
	defer bad.Close()
	err = bad.Ping()
	var unknown x509.UnknownAuthorityError
	check(errors.As(err, &unknown), "a CA that did not sign the proxy's certificate: want x509.UnknownAuthorityError, got %v", err)
	if failed > 0 {
		fmt.Printf("%d failed\n", failed)
		os.Exit(1)
	}
	fmt.Println("go tls: ok")
}
