package ahsc

import (
	"strings"
	"testing"
)

// authorsCSV is a hand-made `bayesmark score --format csv` output: two series (commit aaa…
// at 15 calls, bbb… at 45), a regression set the section leaves out.
const authorsCSV = `source,problem,dataset,optimizer,method,studies,calls_min,calls_max,mean,ci_low,ci_high,median,median_ci_low,median_ci_high,generalization_mean,generalization_ci_low,generalization_ci_high,baseline,baseline_diff,resamples,seed,source_commit,eval_path,baseline_path
r/iris_min,MLP-adam_iris,iris,stcvx_x_r,stcvx,20,15,15,90.004,89.1,91.2,90,89,91,80,79,81,stored,0,10000,1,aaaaaaa111,r/iris_min/derived/eval.json,r/iris_min/derived/baseline.json
r/iris_min,MLP-adam_iris,iris,random_0.0.8_r,random,20,15,15,92.5,91,94,92,91,93,80,79,81,stored,0,10000,1,aaaaaaa111,r/iris_min/derived/eval.json,r/iris_min/derived/baseline.json
r/wine_min/run_1,MLP-adam_wine,wine,stcvx_x_r,stcvx,20,15,15,92.35,91,93,92,91,93,80,79,81,stored,0,10000,1,aaaaaaa111,r/wine_min/run_1/eval/*.json (80 files),r/wine_min/run_1/derived/baseline.json
r/wine_min/run_1,MLP-adam_wine,wine,random_0.0.8_r,random,20,15,15,76.25,70,81,76,71,84,80,79,81,stored,0,10000,1,aaaaaaa111,r/wine_min/run_1/eval/*.json (80 files),r/wine_min/run_1/derived/baseline.json
r/diabetes,MLP-adam_diabetes,diabetes,strongcvx_x_r,strongcvx,20,45,45,98,97,99,98,97,99,98,97,99,stored,0,10000,1,bbbbbbb222,r/diabetes/derived/eval.json,r/diabetes/derived/baseline.json
r/iris,MLP-adam_iris,iris,strongcvx_x_r,strongcvx,20,45,45,93.09,91.9,94.3,93,91,94,88,87,89,stored,0,10000,1,bbbbbbb222,r/iris/derived/eval.json,r/iris/derived/baseline.json
r/iris,MLP-adam_iris,iris,random_0.0.8_r,random,20,45,45,92.26,91.3,93.1,92,91,93,85,84,86,stored,0,10000,1,bbbbbbb222,r/iris/derived/eval.json,r/iris/derived/baseline.json
`

func TestAuthorsOutputsSection(t *testing.T) {
	ao, err := ReadAuthorsOutputs(strings.NewReader(authorsCSV))
	if err != nil {
		t.Fatal(err)
	}
	md := ao.section(map[string][2]string{"iris": {"81.81 [80.00, 83.00]", "81.39"}, "wine": {"", "75.80"}}, "15 calls")
	for _, want := range []string{
		"## The authors' stored outputs, re-scored\n",
		"stored runs at commit aaaaaaa (15 calls × 1 suggestion, 20 studies",
		"give AHSC iris 90.00, wine 92.35: the paper's AHSC column within 0.996 (stored minus paper: iris -0.996, wine +0.000)",
		"so AHSC is above random on 1 of 2 datasets",
		"| dataset | paper's AHSC | authors' stored AHSC (15 calls) | authors' stored random (15 calls) | ours: AHSC, 15 calls | ours: random, 15 calls |",
		"| iris | 91.00 | 90.00 [89.10, 91.20] | 92.50 [91.00, 94.00] | 81.81 [80.00, 83.00] | 81.39 |",
		"| wine | 92.35 | 92.35 [91.00, 93.00] | 76.25 [70.00, 81.00] | – | 75.80 |",
		"| breast | 93.98 | – | – | – | – |",
		"identical to the ones recomputed from the same studies; in brackets the percentile-bootstrap 95% interval over the studies (10000 resamples, seed 1)",
		"at commit bbbbbbb, 45 calls",
		"| iris | 93.09 [91.90, 94.30] | 92.26 [91.30, 93.10] |",
		"- iris, 15 calls: commit aaaaaaa111, `r/iris_min/derived/eval.json` and `r/iris_min/derived/baseline.json`",
		"- wine, 15 calls: commit aaaaaaa111, `r/wine_min/run_1/eval/*.json (80 files)`",
		"- iris, 45 calls: commit bbbbbbb222",
		AuthorsBayesmarkCommand,
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the section lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "diabetes") {
		t.Error("the regression set diabetes is not a Table 1 dataset")
	}
	for _, c := range []struct{ csv, want string }{
		{"source,dataset\nx,iris\n", `no column "method"`},
		{strings.Replace(authorsCSV, "random_0.0.8_r,random,20,15", "tpe_0.0.8_r,tpe,20,15", 1), "two optimizers (stcvx, tpe)"},
		{strings.Replace(authorsCSV, "90.004", "ninety", 1), "row 2, mean"},
		{strings.Replace(authorsCSV, ",20,15,15,90.004", ",20,14,15,90.004", 1), "studies of 14 to 15 calls"},
	} {
		if _, err := ReadAuthorsOutputs(strings.NewReader(c.csv)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want one saying %q", err, c.want)
		}
	}
}
