package experiments

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"

	"github.com/hyperflat/hyperflat/graph"
)

// What a cell records of what computed it (store.Outcome): the build and the machine.

// CodeVersion is the VCS revision the binary was built from and the BLAS its products use
// ("0123abcd… blas=openblas"): the two builds sum products in different orders, so a stored
// cell says which computed it. A binary built from a modified tree says which modification:
// "+dirty.diff-HASH" with the hash of the tree's diff when the build recorded it (go build
// -ldflags "-X github.com/hyperflat/hyperflat/experiments.diffHash=$(git diff HEAD | sha256sum
// | cut -c1-12)"), else "+dirty.exe-HASH" with the hash of the executable itself, which
// differs for every modification — never a bare "+dirty", which two different modified trees
// would share. Without VCS information the revision is "devel.exe-HASH", for the same reason.
func CodeVersion() string { return codeVersion() }

var codeVersion = sync.OnceValue(func() string {
	rev, dirty := "devel", false
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
	}
	return versionString(rev, dirty, diffHash, executableHash) + " blas=" + graph.BLAS
})

// diffHash names a modified tree's diff, when the build sets it (see CodeVersion).
var diffHash string

// versionString is CodeVersion's revision part: rev, and for a modified tree the hash of its
// diff, or failing that of the executable (exe); for an unknown revision ("devel") the hash of
// the executable.
func versionString(rev string, dirty bool, diff string, exe func() string) string {
	switch {
	case rev == "devel":
		// No VCS information (a build outside a checkout, a Docker build without .git): the
		// executable is all that tells two such builds apart.
		return rev + ".exe-" + exe()
	case !dirty:
		return rev
	case diff != "":
		return rev + "+dirty.diff-" + diff
	}
	return rev + "+dirty.exe-" + exe()
}

// executableHash is the first 12 hex digits of the SHA-256 of this process's executable, or
// "unknown" when it cannot be read.
func executableHash() string {
	path, err := os.Executable()
	if err != nil {
		return "unknown"
	}
	f, err := os.Open(path)
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "unknown"
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}

// hostDescription names the machine a cell ran on, as its outcome records it (store.Outcome.Host):
// the host name and, read from /proc/cpuinfo where there is one, the CPU — model name, family and
// model numbers, the widest vector extension — and the CPUs the process may use. Machines that
// share a host name (every cloud VM called "vm") differ in exactly these, and they move a cell's
// time by a factor and, through the kernels an instruction set selects, its last bits.
var hostDescription = sync.OnceValue(func() string {
	host, err := os.Hostname()
	if err != nil {
		host = "unknown"
	}
	cpu := runtime.GOARCH
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		if d := describeCPU(f); d != "" {
			cpu = d
		}
		f.Close()
	}
	return fmt.Sprintf("%s (%s, %d CPUs)", host, cpu, runtime.NumCPU())
})

// describeCPU reads the first processor's entry of a Linux /proc/cpuinfo: "AMD EPYC, family 25
// model 1, AVX2", or "" when it names no model.
func describeCPU(r io.Reader) string {
	fields := map[string]string{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024) // flags lines are long
	for sc.Scan() {
		line := sc.Text()
		if strings.TrimSpace(line) == "" {
			break // the end of the first processor's entry
		}
		k, v, ok := strings.Cut(line, ":")
		if ok {
			fields[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	name := fields["model name"]
	if name == "" {
		return ""
	}
	d := name
	if fam, model := fields["cpu family"], fields["model"]; fam != "" && model != "" {
		d += fmt.Sprintf(", family %s model %s", fam, model)
	}
	flags := " " + fields["flags"] + " "
	for _, ext := range []struct{ flag, name string }{{"avx512f", "AVX-512"}, {"avx2", "AVX2"}, {"avx", "AVX"}} {
		if strings.Contains(flags, " "+ext.flag+" ") {
			return d + ", " + ext.name
		}
	}
	return d
}
