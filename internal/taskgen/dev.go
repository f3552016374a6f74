package taskgen

// devFamilies are the task families of this file.
func devFamilies() []Family {
	return nil
}
