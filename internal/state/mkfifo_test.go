package state

import "syscall"

func mkfifo(path string) { syscall.Mkfifo(path, 0o644) }
