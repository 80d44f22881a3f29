// Package datasets loads the datasets hyperflat's experiments use, keeps a registry of them
// with checksums and download addresses, and provides the preprocessing the experiments
// apply (one-hot encoding, standardization, row-wise L2 normalization, stratified splits,
// label matrices and mini-batch iteration).
//
// # Datasets
//
// A [Dataset] holds one split of a classification or regression dataset in memory, one row
// per example: X is row-major N×D float64, images flattened channel-first (C×H×W) with pixel
// values scaled to [0, 1]; Y holds class indices into Classes (classification) or Target
// holds real targets (regression). Missing values (ARFF "?") are NaN. For tables, Features
// describes every column before encoding; a nominal column holds the index of its category.
//
// # Readers
//
// Every file format has an io.Reader-based parser, which takes a name used in error messages,
// and a file-based wrapper taking a [context.Context]:
//
//   - gzip IDX (MNIST, Fashion-MNIST): [ReadIDX], [LoadIDX]
//   - CIFAR-10 binary batches: [ReadCIFAR10], [LoadCIFAR10]
//   - scikit-learn CSV ("n_samples,n_features,class names..." first line): [ReadSklearnCSV], [LoadSklearnCSV]
//   - delimited tables with an optional header and a target column, such as the PMLB TSV files
//     or the UCI blood-transfusion CSV: [ReadTable], [LoadTable], and [ReadPMLB], [LoadPMLB]
//   - ARFF (Weka, OpenML, PROMISE): [ReadARFF], [LoadARFF]
//   - SVHN MATLAB v5 .mat files, compressed or not: [ReadSVHN], [LoadSVHN]
//
// Input that is gzip-compressed is recognized by its magic bytes and decompressed. Parsers
// never panic on bad input: every failure is an error, and a malformed, truncated, empty or
// wrong-shape file, a non-numeric or out-of-range value or a label outside the classes gives
// a [*ParseError] naming the file, the position and what was expected, such as
//
//	datasets: iris.csv: line 12, column 3: feature 2: "abc" is not a number, expected a finite decimal number
//	datasets: train-labels-idx1-ubyte.gz: decompressed byte offset 8: truncated: expected 60000 labels (60000 bytes from offset 8), got 0 bytes
//
// Text formats accept finite decimal numbers only: "NaN", "inf", "Infinity", hexadecimal
// numbers and values beyond the float64 range are errors, since none of these formats uses
// them for missing values. The one notation for a missing value is ARFF's "?", which becomes
// NaN in X (never in the class). Binary image formats hold pixel bytes; SVHN's X may also be
// stored as real numbers, which must then be 0…255. Every parser has a Go fuzz target
// (fuzz_test.go, seed corpora in testdata/fuzz), run by .ci/fuzz.sh.
//
// A user's own table may hold text: with [TableOptions].Text a class target may be any
// strings (the classes in sorted order), a text feature column becomes a nominal feature of
// its sorted distinct values, and a target of non-integer numbers is refused as regression.
// Header names must be distinct in every format. [CheckClassification] refuses, with the
// reason, a dataset that cannot make a classification problem (one class, a declared class
// with no rows, a binary class of fewer than [MinClassRows] rows).
//
// # Limits
//
// Input is bounded so that a corrupt or hostile file fails with an error naming it and the
// limit rather than exhausting memory or never finishing:
//
//   - a line of a text format (CSV, TSV, ARFF and the other delimited files, after
//     decompression) may be at most [MaxLineBytes] (4 MiB) long;
//   - a text column of a table read with TableOptions.Text may have at most
//     [MaxCategories] distinct values;
//   - a registry file must be a regular file (not a device or a FIFO, even behind a
//     symlink) and is read up to one byte past its recorded size, a longer one being a
//     size mismatch;
//   - binary formats never allocate from a size field before the data is there, and a
//     header that announces more than the limits below is refused from the header;
//   - every reader takes at most [MaxInputBytes] bytes of (decompressed) input, reads at most
//     [MaxRows] rows and holds at most [MaxDatasetBytes] bytes for the dataset, each checked
//     while it reads;
//   - a registry file's size and checksum are checked before it is parsed;
//   - text that is not UTF-8 with LF or CRLF line ends (UTF-16, CR alone) and gzip inside
//     gzip are refused with what they are.
//
// [LoadHashed] hashes the bytes it parses as it reads them, once, so the digest a run stores
// is that of the data it trained on. The Load functions open files without blocking and stop
// reading when their context is done, even on a FIFO or a pipe.
//
// # Registry
//
// [Names] and [Lookup] describe the paper's 14 datasets (mnist, svhn, breast, digits, iris,
// wine, vehicle, blood-transfusion, australian, car, phoneme, segment, credit-g, kc1) and a
// few extras (cifar10, fashion-mnist, diabetes, boston): files relative to the data
// directory with their SHA-256 (or, for SVHN, the official MD5 and size), class count, task,
// expected shape, provenance and download address. [Load] reads one of them from a data
// directory, verifying every checksum, and reports a missing file as a single
// [*MissingError] that says where to get it. [ResolveDir] picks the data directory from a
// flag value, the [EnvDataDir] environment variable, or the default, and [SharedDataDir]
// finds the development copy at <repo root>/../shared/data.
//
// The four small scikit-learn datasets (iris, wine, breast, digits; BSD-3-Clause, notice in
// embedded/LICENSE) are compiled into the package: [LoadEmbedded] needs no data directory,
// and [Load] falls back to them when the data directory lacks their files.
//
// # Preprocessing
//
// [EncodeNominal] one-hot encodes nominal columns using their declared categories;
// [FitOneHotEncoder] one-hot encodes every column, as scikit-learn's
// OneHotEncoder(handle_unknown='ignore') does in the OpenML experiments; [FitStandardizer]
// standardizes with statistics of the training split; [NormalizeRows] scales rows to unit L2
// norm; [Split] and [StratifiedIndices] draw stratified splits from an explicit seeded
// *rand.Rand; [OneHot] builds label matrices; [Batches] iterates mini-batch indices in order
// or shuffled.
//
// The package has no mutable package-level state and draws randomness only from the
// *rand.Rand its callers pass.
package datasets
