package taskgen

// travelFamilies are the task families of this file.
func travelFamilies() []Family {
	return nil
}
