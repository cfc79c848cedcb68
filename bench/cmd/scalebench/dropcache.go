package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"unsafe"

	"golang.org/x/sys/unix"

	"utxod/internal/cli"
)

// /proc/sys/vm/drop_caches is not writable in a container, so a cold start
// is made per file: write back its dirty pages, then POSIX_FADV_DONTNEED.

func runDropCache(args []string, stdout, stderr io.Writer) int {
	t := cli.New("scalebench dropcache", usage, stdout, stderr)
	check := t.Flags.Bool("check", false, "report the resident fraction (mincore) before and after")
	if len(args) == 0 {
		return t.UsageError(errors.New("want a directory"))
	}
	dir := args[0]
	if code, done := t.Parse(args[1:]); done {
		return code
	}
	if *check {
		res, total, err := resident(dir)
		if err != nil {
			return t.Fail(err)
		}
		fmt.Fprintf(stdout, "before: %s\n", fraction(res, total))
	}
	if err := dropCache(dir); err != nil {
		return t.Fail(err)
	}
	if *check {
		res, total, err := resident(dir)
		if err != nil {
			return t.Fail(err)
		}
		fmt.Fprintf(stdout, "after:  %s\n", fraction(res, total))
	}
	return cli.ExitOK
}

func fraction(res, total int64) string {
	if total == 0 {
		return "0 of 0 bytes resident"
	}
	return fmt.Sprintf("%d of %d MiB resident (%.1f%%)", res>>20, total>>20, 100*float64(res)/float64(total))
}

// dropCache drops every regular file under dir from the page cache.
func dropCache(dir string) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		fd := int(f.Fd())
		if err := unix.Fdatasync(fd); err != nil {
			return fmt.Errorf("%s: fdatasync: %w", p, err)
		}
		if err := unix.Fadvise(fd, 0, 0, unix.FADV_DONTNEED); err != nil {
			return fmt.Errorf("%s: fadvise: %w", p, err)
		}
		return nil
	})
}

// resident sums the bytes of dir's regular files that are in the page cache
// (mincore over a read-only mapping of each) and their total size.
func resident(dir string) (res, total int64, err error) {
	page := int64(os.Getpagesize())
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil || fi.Size() == 0 {
			return err
		}
		total += fi.Size()
		m, err := unix.Mmap(int(f.Fd()), 0, int(fi.Size()), unix.PROT_READ, unix.MAP_SHARED)
		if err != nil {
			return fmt.Errorf("%s: mmap: %w", p, err)
		}
		defer unix.Munmap(m)
		vec := make([]byte, (fi.Size()+page-1)/page)
		if _, _, e := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)), uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
			return fmt.Errorf("%s: mincore: %w", p, e)
		}
		for i, v := range vec {
			if v&1 != 0 {
				res += min(page, fi.Size()-int64(i)*page)
			}
		}
		return nil
	})
	return res, total, err
}
