package policy

import (
	"fmt"

	"github.com/watchdogd/watchdogd/internal/model"
)

// memberSeqs are the seqs and channels of an Alertmanager step's actions
// to members after the first.
func (p *planner) memberSeqs(seq string, kind model.ActionKind) [][2]string {
	if kind != model.ActionAlertmanager {
		return nil
	}
	var out [][2]string
	for i := 1; i < p.in.Members; i++ {
		out = append(out, [2]string{fmt.Sprintf("%s/member/%d", seq, i), fmt.Sprint(i)})
	}
	return out
}
