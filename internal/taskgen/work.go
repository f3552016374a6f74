package taskgen

// workFamilies are the task families of this file.
func workFamilies() []Family {
	return nil
}
