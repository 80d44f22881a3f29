package experiments

import "github.com/hyperflat/hyperflat/datasets"

// RegenerationData is the sentence a page of docs/reproduction puts right after the command
// that regenerates it, since that command needs the datasets beside the exports: `hyperflat
// import` rebuilds each export's plan to check its cells against it, reading the data files
// the runs used (their hashes are part of the cells), and fails without them unless told
// --no-plan-check; `hyperflat report` reads them again where it rebuilds a run's result
// (reportReads: the AHSC and premise pages; Table C.1's reads only the stored cells).
func RegenerationData(reportReads bool) string {
	what := "Regenerating it reads the datasets the runs used (`hyperflat import` checks each export's cells against them"
	if reportReads {
		what += " and the report rebuilds the runs from them)"
	} else {
		what += "; the report reads none)"
	}
	return what + " from `--data-dir`, else `$" + datasets.EnvDataDir + "`, else `../shared/data` (beside the clone), else `./data` " +
		"(README.md, \"Data\"; `hyperflat data` lists what is missing)."
}
