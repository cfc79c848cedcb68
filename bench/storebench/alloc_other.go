//go:build !unix

package storebench

import "os"

func allocated(fi os.FileInfo) int64 { return fi.Size() }
