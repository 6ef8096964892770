package kandevdb

// Choices turns a fuzzer's bytes into a generator's choices, so that every
// input decodes to some dataset and a mutated byte changes one choice.
type Choices struct {
	b []byte
	i int
}

// NewChoices reads choices from b.
func NewChoices(b []byte) *Choices { return &Choices{b: b} }

// Next returns the next choice among n (0 to n-1): the next byte modulo n,
// and 0 once the bytes are spent.
func (c *Choices) Next(n int) int {
	if c.i >= len(c.b) {
		return 0
	}
	v := int(c.b[c.i])
	c.i++
	return v % n
}
