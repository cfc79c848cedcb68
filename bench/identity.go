package bench

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/klauspost/cpuid/v2"
	"golang.org/x/sys/unix"

	"utxod/params"
	"utxod/wire"
)

// GitIdentity is the working tree the harness ran in.
type GitIdentity struct {
	Head  string `json:"head"`            // git rev-parse HEAD, "" outside a repository
	Dirty *bool  `json:"dirty,omitempty"` // uncommitted changes (git status --porcelain non-empty)
	Dir   string `json:"dir"`
}

// Binary identifies one arm's executable.
type Binary struct {
	Path        string `json:"path"`
	SHA256      string `json:"sha256"`
	Bytes       int64  `json:"bytes"`
	GoVersion   string `json:"go_version,omitempty"`   // from the binary's build info
	VCSRevision string `json:"vcs_revision,omitempty"` // from the binary's build info, if stamped
	VCSModified *bool  `json:"vcs_modified,omitempty"`
}

// CorpusIdentity identifies the block file.
type CorpusIdentity struct {
	Path    string `json:"path"`
	SHA256  string `json:"sha256"`
	Bytes   int64  `json:"bytes"`
	Network string `json:"network"`
	// Source and PrefixBlocks are set when the corpus is the first
	// PrefixBlocks blocks of Source (--corpus-blocks); Path is then the
	// prefix file, which the harness deletes afterwards (SHA256 identifies it).
	Source       string `json:"source,omitempty"`
	SourceSHA256 string `json:"source_sha256,omitempty"`
	PrefixBlocks int    `json:"prefix_blocks,omitempty"`
	Blocks       int    `json:"blocks"`    // framed blocks in the file
	Height       int    `json:"height"`    // height of the best-linked tip (genesis = 0)
	StopHash     string `json:"stop_hash"` // that tip's hash: every run must end there
}

// HostIdentity describes the machine.
type HostIdentity struct {
	CPUModel  string          `json:"cpu_model"`
	CPUVendor string          `json:"cpu_vendor"`
	Features  map[string]bool `json:"features"` // avx2, avx512f, avx512bw, sha
	Cores     int             `json:"cores"`    // runtime.NumCPU
	Kernel    string          `json:"kernel"`   // uname -srvm
	OS        string          `json:"os"`
	Arch      string          `json:"arch"`
	GoVersion string          `json:"go_version"` // of the harness binary
}

// HostInfo describes the machine the harness runs on.
func HostInfo() HostIdentity {
	h := HostIdentity{
		CPUModel:  strings.TrimSpace(cpuid.CPU.BrandName),
		CPUVendor: cpuid.CPU.VendorString,
		Features: map[string]bool{
			"avx2":     cpuid.CPU.Supports(cpuid.AVX2),
			"avx512f":  cpuid.CPU.Supports(cpuid.AVX512F),
			"avx512bw": cpuid.CPU.Supports(cpuid.AVX512BW),
			"avx512vl": cpuid.CPU.Supports(cpuid.AVX512VL),
			"sha":      cpuid.CPU.Supports(cpuid.SHA),
		},
		Cores:     runtime.NumCPU(),
		OS:        runtime.GOOS,
		Arch:      runtime.GOARCH,
		GoVersion: runtime.Version(),
	}
	var u unix.Utsname
	if err := unix.Uname(&u); err == nil {
		h.Kernel = strings.Join([]string{unix.ByteSliceToString(u.Sysname[:]), unix.ByteSliceToString(u.Release[:]),
			unix.ByteSliceToString(u.Version[:]), unix.ByteSliceToString(u.Machine[:])}, " ")
	}
	return h
}

// LoadAvg reads /proc/loadavg: the 1, 5 and 15-minute load averages (zeros
// where unavailable).
func LoadAvg() [3]float64 {
	var l [3]float64
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return l
	}
	f := strings.Fields(string(b))
	for i := 0; i < 3 && i < len(f); i++ {
		l[i], _ = strconv.ParseFloat(f[i], 64)
	}
	return l
}

// GitInfo reports the commit and cleanliness of the repository containing
// dir; Head is empty when git or the repository is missing.
func GitInfo(ctx context.Context, dir string) GitIdentity {
	g := GitIdentity{Dir: dir}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "git", "-C", dir, "rev-parse", "HEAD").Output()
	if err != nil {
		return g
	}
	g.Head = strings.TrimSpace(string(out))
	if st, err := exec.CommandContext(ctx, "git", "-C", dir, "status", "--porcelain", "--untracked-files=no").Output(); err == nil {
		dirty := len(bytes.TrimSpace(st)) > 0
		g.Dirty = &dirty
	}
	return g
}

// BinaryInfo hashes an executable and reads its Go build info.
func BinaryInfo(path string) (Binary, error) {
	b := Binary{Path: path}
	f, err := os.Open(path)
	if err != nil {
		return b, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return b, err
	}
	b.SHA256, b.Bytes = hex.EncodeToString(h.Sum(nil)), n
	if bi, err := buildinfo.ReadFile(path); err == nil {
		b.GoVersion = bi.GoVersion
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				b.VCSRevision = s.Value
			case "vcs.modified":
				m := s.Value == "true"
				b.VCSModified = &m
			}
		}
	}
	return b, nil
}

// ModuleVersion is the version of module path compiled into the binary bin
// ("unknown" if its build info does not say).
func ModuleVersion(bin, path string) string {
	bi, err := buildinfo.ReadFile(bin)
	if err != nil {
		return "unknown"
	}
	for _, d := range bi.Deps {
		if d.Path == path {
			return d.Version
		}
	}
	return "unknown"
}

// ScanCorpus hashes the corpus and finds the tip its blocks link up to from
// the network's genesis (the highest block whose ancestors are all in the
// file; on a tie the first seen), which every run must reach.
func ScanCorpus(path, network string) (CorpusIdentity, error) {
	c := CorpusIdentity{Path: path, Network: network}
	p, err := params.ByName(network)
	if err != nil {
		return c, err
	}
	f, err := os.Open(path)
	if err != nil {
		return c, err
	}
	defer f.Close()
	h := sha256.New()
	cr := &countingReader{r: io.TeeReader(f, h)}
	r := wire.NewBlockFileReader(cr, p.Magic)
	type node struct {
		hash, prev wire.Hash
	}
	var nodes []node
	for {
		raw, _, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return c, fmt.Errorf("bench: corpus %s: %w", path, err)
		}
		hdr, err := wire.ParseHeader(raw)
		if err != nil {
			return c, fmt.Errorf("bench: corpus %s block %d: %w", path, len(nodes), err)
		}
		nodes = append(nodes, node{hash: wire.DoubleSHA256(raw[:wire.HeaderSize]), prev: hdr.PrevBlock})
	}
	// The reader stops at EOF; hash anything it left unread (trailing bytes).
	if _, err := io.Copy(io.Discard, cr); err != nil {
		return c, err
	}
	c.SHA256, c.Bytes, c.Blocks = hex.EncodeToString(h.Sum(nil)), cr.n, len(nodes)
	// Files may be out of order (Core's blk*.dat are): walk the children
	// from genesis.
	children := map[wire.Hash][]int{}
	for i, n := range nodes {
		children[n.prev] = append(children[n.prev], i)
	}
	best, bestH, bestIdx := p.GenesisHash, 0, -1
	type item struct {
		hash wire.Hash
		h    int
	}
	seen := map[wire.Hash]bool{p.GenesisHash: true}
	queue := []item{{p.GenesisHash, 0}}
	for len(queue) > 0 {
		it := queue[0]
		queue = queue[1:]
		for _, i := range children[it.hash] {
			n := nodes[i]
			if seen[n.hash] {
				continue
			}
			seen[n.hash] = true
			hh := it.h + 1
			if hh > bestH || (hh == bestH && i < bestIdx) {
				best, bestH, bestIdx = n.hash, hh, i
			}
			queue = append(queue, item{n.hash, hh})
		}
	}
	c.Height, c.StopHash = bestH, best.String()
	return c, nil
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// WritePrefix copies the first n framed blocks of the block file src to dst
// (Core framing: magic, little-endian length, block) and returns how many it
// wrote (fewer if src has fewer).
func WritePrefix(src, network string, n int, dst string) (int, error) {
	p, err := params.ByName(network)
	if err != nil {
		return 0, err
	}
	in, err := os.Open(src)
	if err != nil {
		return 0, err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return 0, err
	}
	w := bufio.NewWriterSize(out, 1<<20)
	r := wire.NewBlockFileReader(in, p.Magic)
	count := 0
	for ; count < n; count++ {
		raw, _, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			out.Close()
			return count, fmt.Errorf("bench: corpus %s: %w", src, err)
		}
		var hdr [8]byte
		copy(hdr[:4], p.Magic[:])
		binary.LittleEndian.PutUint32(hdr[4:], uint32(len(raw)))
		w.Write(hdr[:])
		w.Write(raw)
	}
	if err := w.Flush(); err != nil {
		out.Close()
		return count, err
	}
	return count, out.Close()
}
