package taskgen

// mediaFamilies are the task families of this file.
func mediaFamilies() []Family {
	return nil
}
