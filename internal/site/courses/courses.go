// Package courses is the online-course site (GUI, a kit spec): courses with
// modules and assignments; the persona enrolls, submits assignments and
// drops courses.
//
// It imports internal/site/kit.
package courses

import "github.com/wildawm/wildawm/internal/site/kit"

// Name is the site's name and world database (db/courses.sqlite).
const Name = "courses"

// Spec is the site.
func Spec() *kit.Spec {
	return &kit.Spec{
		Name: Name, Title: "Openclass", Tagline: "Five hundred courses, taught week by week.",
		Schema: []string{
			`CREATE TABLE enrollments (id INTEGER PRIMARY KEY, username TEXT NOT NULL, course TEXT NOT NULL, status TEXT NOT NULL, enrolled_at TEXT NOT NULL, UNIQUE (username, course))`,
			`CREATE TABLE submissions (id INTEGER PRIMARY KEY, username TEXT NOT NULL, course TEXT NOT NULL, assignment_id INTEGER NOT NULL, answer TEXT NOT NULL, submitted_at TEXT NOT NULL)`,
			kit.NaturalKeyIndex("submissions", "username", "course", "assignment_id", "answer", "submitted_at"),
		},
		Lists: []kit.List{{
			Name: "courses", Title: "Courses", Path: "/courses",
			Select:  `SELECT slug AS key, title, subject, level, instructor, weeks FROM courses`,
			Search:  []string{"title", "subject", "instructor"},
			Filters: []kit.Filter{{Name: "subject", Label: "Subject", Column: "subject", OptionsSQL: `SELECT DISTINCT subject FROM courses ORDER BY 1`}, {Name: "level", Label: "Level", Column: "level", Options: []string{"beginner", "intermediate", "advanced"}}},
			Order:   "subject, title, key",
			Columns: []kit.Column{{Key: "title", Label: "Course"}, {Key: "subject", Label: "Subject"}, {Key: "level", Label: "Level"}, {Key: "instructor", Label: "Instructor"}, {Key: "weeks", Label: "Weeks"}},
			Detail: kit.Detail{
				SQL:    `SELECT title, subject, level, instructor, weeks, summary FROM courses WHERE slug = :key`,
				Fields: []kit.Column{{Key: "subject", Label: "Subject"}, {Key: "level", Label: "Level"}, {Key: "instructor", Label: "Instructor"}, {Key: "weeks", Label: "Weeks"}, {Key: "summary", Label: "About", Kind: "long"}},
				Sections: []kit.Section{
					{Title: "Modules", SQL: `SELECT m.pos, m.title, m.summary FROM course_modules m JOIN courses c ON c.id = m.course_id WHERE c.slug = :key ORDER BY m.pos`, Columns: []kit.Column{{Key: "pos", Label: "Module"}, {Key: "title", Label: "Title"}, {Key: "summary", Label: "What it covers"}}},
					{Title: "Assignments", SQL: `SELECT a.title, a.kind, a.module_pos, a.due_week, a.points FROM course_assignments a JOIN courses c ON c.id = a.course_id WHERE c.slug = :key ORDER BY a.id`, Columns: []kit.Column{{Key: "title", Label: "Assignment"}, {Key: "kind", Label: "Kind"}, {Key: "module_pos", Label: "Module"}, {Key: "due_week", Label: "Due in week"}, {Key: "points", Label: "Points"}}},
				},
			},
		}},
		Actions: []kit.Action{
			{Name: "enroll", Label: "Enroll", On: "courses",
				Check: `SELECT 'you are enrolled already' FROM enrollments WHERE username = :user AND course = :key AND status = 'active'`,
				Exec:  []string{`INSERT INTO enrollments (username, course, status, enrolled_at) VALUES (:user, :key, 'active', :now) ON CONFLICT (username, course) DO UPDATE SET status = 'active', enrolled_at = excluded.enrolled_at`},
				Done:  "You are enrolled.", Then: "/enrollments"},
			{Name: "submit", Label: "Submit assignment", On: "courses", Inputs: []kit.Input{
				{Name: "assignment", Label: "Assignment", Kind: "select", OptionsSQL: `SELECT a.id || ' ' || a.title || ' (' || a.kind || ')' FROM course_assignments a JOIN courses c ON c.id = a.course_id WHERE c.slug = :key ORDER BY a.id`},
				{Name: "answer", Label: "Your answer", Kind: "text", MaxLen: 5000}},
				Check: `SELECT 'enroll in the course before you submit' WHERE NOT EXISTS (SELECT 1 FROM enrollments WHERE username = :user AND course = :key AND status = 'active')`,
				Exec:  []string{`INSERT INTO submissions (username, course, assignment_id, answer, submitted_at) VALUES (:user, :key, CAST(:assignment AS INTEGER), :answer, :now)`},
				Done:  "Assignment submitted.", Then: "/submissions"},
			{Name: "drop", Label: "Drop course", On: "enrollments",
				Check: `SELECT 'you are not enrolled in ' || :key WHERE NOT EXISTS (SELECT 1 FROM enrollments WHERE username = :user AND course = :key AND status = 'active')`,
				Exec:  []string{`UPDATE enrollments SET status = 'dropped' WHERE username = :user AND course = :key`},
				Done:  "Course dropped.", Then: "/enrollments"},
		},
		Histories: []kit.History{
			{Name: "enrollments", Title: "My courses", Path: "/enrollments", Link: "/courses/",
				SQL:     `SELECT e.course AS key, e.course AS link, c.title, c.instructor, e.status, e.enrolled_at FROM enrollments e JOIN cat.courses c ON c.slug = e.course WHERE e.username = :user ORDER BY e.id DESC`,
				Columns: []kit.Column{{Key: "title", Label: "Course"}, {Key: "instructor", Label: "Instructor"}, {Key: "status", Label: "Status"}, {Key: "enrolled_at", Label: "Enrolled"}}},
			{Name: "submissions", Title: "Submissions", Path: "/submissions", Link: "/courses/",
				SQL:     `SELECT s.id AS key, s.course AS link, c.title AS course, a.title, s.answer, s.submitted_at FROM submissions s JOIN cat.courses c ON c.slug = s.course JOIN cat.course_assignments a ON a.id = s.assignment_id WHERE s.username = :user ORDER BY s.id DESC`,
				Columns: []kit.Column{{Key: "course", Label: "Course"}, {Key: "title", Label: "Assignment"}, {Key: "answer", Label: "Answer"}, {Key: "submitted_at", Label: "Submitted"}}},
		},
	}
}
