package world

// Produces declares what a day's delta writes. After apply, every entry must
// exist and must differ from the parent state (the produces check).
type Produces struct {
	Rows     []RowRef     `json:"rows,omitempty"`
	Files    []string     `json:"files,omitempty"`
	Accounts []AccountRef `json:"accounts,omitempty"`
}

// RowRef names one row by its natural key.
type RowRef struct {
	DB    string         `json:"db"`
	Table string         `json:"table"`
	Key   map[string]any `json:"key"`
}

// AccountRef names one account.
type AccountRef struct {
	Site     string `json:"site"`
	Username string `json:"username"`
}
