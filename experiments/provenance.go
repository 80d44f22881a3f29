package experiments

import (
	"bufio"
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

// CodeVersion is the VCS revision the binary was built from ("devel" when unknown), "+dirty"
// when its tree had changes, and the BLAS its products use ("devel blas=openblas"): the two
// builds sum products in different orders, so a stored cell says which computed it.
func CodeVersion() string {
	v, dirty := "devel", false
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				v = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
	}
	if dirty {
		v += "+dirty"
	}
	return v + " blas=" + graph.BLAS
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
