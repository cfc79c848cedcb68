package layout

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// maxFuncLines bounds the functions of the packages that wire the node
// together: a command is its named steps, each short enough to read at once.
const maxFuncLines = 80

// wiringDirs are the packages whose functions maxFuncLines bounds (not
// their tests).
var wiringDirs = []string{"cmd/utxod", "node"}

// TestFunctionLength fails for every function or method of wiringDirs
// longer than maxFuncLines lines, from its func keyword to its closing
// brace (function literals count toward the function holding them).
func TestFunctionLength(t *testing.T) {
	for _, dir := range wiringDirs {
		files, err := filepath.Glob(filepath.Join("..", "..", dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		if len(files) == 0 {
			t.Fatalf("%s: no Go files", dir)
		}
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			for _, f := range longFuncs(t, path) {
				t.Errorf("%s: %s", filepath.Join(dir, filepath.Base(path)), f)
			}
		}
	}
}

// longFuncs lists the functions of the file at path over maxFuncLines.
func longFuncs(t *testing.T, path string) []string {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var long []string
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		start, end := fset.Position(fd.Pos()).Line, fset.Position(fd.End()).Line
		if n := end - start + 1; n > maxFuncLines {
			long = append(long, fmt.Sprintf("%s runs %d lines (at most %d)", funcName(fd), n, maxFuncLines))
		}
	}
	return long
}

// funcName is "Name" or "Recv.Name".
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	typ := fd.Recv.List[0].Type
	if s, ok := typ.(*ast.StarExpr); ok {
		typ = s.X
	}
	if id, ok := typ.(*ast.Ident); ok {
		return id.Name + "." + fd.Name.Name
	}
	return fd.Name.Name
}
