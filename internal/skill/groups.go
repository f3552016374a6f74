package skill

// serviceSkills are the events of the MCP services (services.go).
func serviceSkills() []Skill { return nil }

// fileSkills are the events of the home directory (files.go).
func fileSkills() []Skill { return nil }
