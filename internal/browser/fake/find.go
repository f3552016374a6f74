package fake

import "golang.org/x/net/html"

// Find is the first element under root, in document order, that selector
// selects, or nil: the matcher the fake's actions use (the subset of CSS
// the error of an unreadable selector names), for a caller holding a page's
// HTML (a Browser's HTML, Chromium's included) rather than a fake.
func Find(root *html.Node, selector string) (*html.Node, error) {
	sel, err := parseSelector(selector)
	if err != nil {
		return nil, err
	}
	return sel.first(root), nil
}
