package skill

// fileSkills are the events of the home directory (files.go).
func fileSkills() []Skill { return nil }
