package taskgen

// homeFamilies are the task families of this file.
func homeFamilies() []Family {
	return nil
}
