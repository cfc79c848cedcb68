package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{3, 1}, 2}, {[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 2.5}} {
		if got := Median(tc.in); got != tc.want {
			t.Errorf("Median(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestSummarizeSkipsFailedRuns(t *testing.T) {
	s := Summarize([]Record{
		{WallS: 3, CPUS: 2, MaxRSSKiB: 100},
		{WallS: 1, CPUS: 4, MaxRSSKiB: 300},
		{WallS: 99, CPUS: 99, MaxRSSKiB: 999, ExitCode: 1},
		{WallS: 98, Error: "no digests"},
	})
	want := Summary{Runs: 2, Times: Times{WallMedianS: 2, WallMinS: 1, WallMaxS: 3, CPUMedianS: 3, CPUMinS: 2, CPUMaxS: 4},
		RSSMedianKiB: 200, RSSMinKiB: 100, RSSMaxKiB: 300}
	if s != want {
		t.Fatalf("%+v, want %+v", s, want)
	}
}

func TestParseCPUList(t *testing.T) {
	got, err := parseCPUList("0,2-4,7")
	if err != nil || !slices.Equal(got, []int{0, 2, 3, 4, 7}) {
		t.Fatalf("%v %v", got, err)
	}
	for _, bad := range []string{"", "a", "3-1", "1,", "-1"} {
		if _, err := parseCPUList(bad); err == nil {
			t.Errorf("parseCPUList(%q): no error", bad)
		}
	}
}

func TestOrder(t *testing.T) {
	for _, c := range []struct {
		names  []string
		rounds int
		want   string
	}{
		{[]string{"a", "b"}, 4, "[[a b] [b a] [a b] [b a]]"},
		{[]string{"a", "b", "c"}, 4, "[[a b c] [b c a] [c a b] [a b c]]"},
		{[]string{"a"}, 2, "[[a] [a]]"},
	} {
		if got := fmt.Sprint(Order(c.names, c.rounds)); got != c.want {
			t.Errorf("Order(%v, %d) = %s, want %s", c.names, c.rounds, got, c.want)
		}
	}
	// With three arms or more: every arm once a round, never twice in a
	// row, and once in each position every len(names) rounds.
	for n := 3; n <= 6; n++ {
		names := make([]string, n)
		for i := range names {
			names[i] = string(rune('a' + i))
		}
		order := Order(names, 2*n+1)
		var prev string
		pos := map[string][]int{}
		for r, round := range order {
			if got := fmt.Sprint(slices.Sorted(slices.Values(round))); got != fmt.Sprint(names) {
				t.Fatalf("n=%d round %d = %v: not every arm once", n, r, round)
			}
			if round[0] == prev {
				t.Fatalf("n=%d: %s runs twice in a row at round %d", n, prev, r)
			}
			prev = round[n-1]
			if r < n {
				for i, a := range round {
					pos[a] = append(pos[a], i)
				}
			}
		}
		for a, p := range pos {
			slices.Sort(p)
			if len(slices.Compact(p)) != n {
				t.Fatalf("n=%d: arm %s positions %v over %d rounds", n, a, p, n)
			}
		}
	}
}

func TestParseDigests(t *testing.T) {
	d, err := ParseDigests([]byte("{\"bestblock\":\"aa\",\"height\":1}\n{\"x\":1}\n{\"bestblock\":\"cd\",\"height\":9,\"txouts\":4}\n"))
	if err != nil || d.BestBlock != "cd" || d.Height != 9 || d.TxOuts != 4 {
		t.Fatalf("%+v %v", d, err)
	}
	if _, err := ParseDigests([]byte(`{"tip":"ab"}`)); err == nil {
		t.Fatal("no bestblock accepted")
	}
	if _, err := ParseDigests([]byte("not json")); err == nil {
		t.Fatal("garbage accepted")
	}
}

// shArm runs script with sh; $1 is the run's datadir.
func shArm(name, script string) Arm {
	return Arm{Name: name, Command: func(_ Step, _, datadir string) (Command, error) {
		return Command{Argv: []string{"sh", "-c", script, "sh", datadir}}, nil
	}}
}

// The runner measures real children in private directories, in ABBA order,
// skips an arm after its failure (or stops the schedule with
// StopOnFailure), runs BeforeRun before each run, and keeps stderr only
// for failed runs.
func TestRunner(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	arms := []Arm{
		shArm("ok", `mkdir "$1" && head -c 1000 /dev/zero > "$1/f" && echo out && echo noise >&2`),
		shArm("bad", `echo starting >&2; echo 'store "x" is not compiled in' >&2; exit 3`),
	}
	for _, stop := range []bool{false, true} {
		workdir := t.TempDir()
		var got []string
		r := &Runner{Workdir: workdir, Prefix: "run-", StopOnFailure: stop, BeforeRun: func(_ context.Context, s Step) error {
			got = append(got, fmt.Sprintf("before%d", s.Seq))
			return nil
		}}
		recs := map[string][]Record{}
		err := r.Run(context.Background(), arms, 2, func(s Step, rec *Record) Outcome {
			got = append(got, fmt.Sprintf("%s#%d@%d/%d", s.Arm, s.Index, s.Seq, s.Of))
			recs[s.Arm] = append(recs[s.Arm], *rec)
			if !rec.OK() {
				return Failed
			}
			return Measured
		})
		if err != nil {
			t.Fatal(err)
		}
		want := "[before1 ok#1@1/4 before2 bad#1@2/4 before4 ok#2@4/4]"
		if stop {
			want = "[before1 ok#1@1/4 before2 bad#1@2/4]"
		}
		if fmt.Sprint(got) != want {
			t.Fatalf("StopOnFailure %v: runs %v, want %s", stop, got, want)
		}
		ok, bad := recs["ok"][0], recs["bad"][0]
		if !ok.OK() || string(ok.Stdout) != "out\n" || ok.Stderr != "" || ok.DatadirB != 1000 || ok.WallS <= 0 || ok.Argv[0] != "sh" {
			t.Errorf("ok run %+v", ok)
		}
		if bad.OK() || bad.ExitCode != 3 || !strings.Contains(bad.Stderr, "starting") || bad.Failure() != `exit 3: store "x" is not compiled in` {
			t.Errorf("bad run %+v: %s", bad, bad.Failure())
		}
		if reason, ok := bad.Unavailable(); !ok || reason != `store "x" is not compiled in` {
			t.Errorf("Unavailable() = %q, %v", reason, ok)
		}
		if left, _ := os.ReadDir(workdir); len(left) != 0 {
			t.Errorf("run directories left behind: %v", left)
		}
	}
	// BeforeRun's error ends the schedule.
	boom := errors.New("boom")
	calls := 0
	r := &Runner{Workdir: t.TempDir(), BeforeRun: func(context.Context, Step) error {
		if calls++; calls == 2 {
			return boom
		}
		return nil
	}}
	n := 0
	if err := r.Run(context.Background(), arms[:1], 3, func(Step, *Record) Outcome { n++; return Measured }); !errors.Is(err, boom) || n != 1 {
		t.Fatalf("Run = %v after %d runs, want boom after 1", err, n)
	}
}

// A run whose output the caller rejects keeps its stderr and counts as
// failed.
func TestRecordFail(t *testing.T) {
	r := Record{tail: "last words\n"}
	if !r.OK() || r.Stderr != "" {
		t.Fatal("fresh record not OK")
	}
	r.Fail(fmt.Errorf("no digests"))
	if r.OK() || r.Stderr != "last words\n" || r.Failure() != "no digests" {
		t.Fatalf("%+v: %s", r, r.Failure())
	}
}

// TestDescribeOrder: the words follow Order's rule, ABBA for two arms and a
// rotation from three.
func TestDescribeOrder(t *testing.T) {
	for _, c := range []struct {
		names []string
		want  string
	}{
		{[]string{"a", "b"}, "arms alternating ABBA (a, b, then reversed)"},
		{[]string{"a", "b", "c"}, "arms rotating (a, b, c, then each round one arm later, so that no arm runs twice in a row)"},
	} {
		if got := DescribeOrder(c.names); got != c.want {
			t.Errorf("DescribeOrder(%v) = %q, want %q", c.names, got, c.want)
		}
	}
}
