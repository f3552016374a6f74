package taskgen

// dailyFamilies are the task families of this file: the persona's daily
// reading and cooking, on the news site and the recipe site
// (daily_news.go, daily_recipes.go).
func dailyFamilies() []Family {
	return []Family{sectionDigest{}, larderShopping{}}
}
