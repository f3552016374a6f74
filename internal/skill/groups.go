package skill

// serviceSkills are the events of the MCP services (services.go).
func serviceSkills() []Skill { return nil }

// siteSkills are the events of the websites (sites.go).
func siteSkills() []Skill { return nil }

// fileSkills are the events of the home directory (files.go).
func fileSkills() []Skill { return nil }
