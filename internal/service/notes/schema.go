package notes

// DBName is the name of the service's database in a world (db/notes.sqlite).
const DBName = "notes"

// TimeFormat is the layout of every timestamp column (UTC).
const TimeFormat = "2006-01-02 15:04:05"
