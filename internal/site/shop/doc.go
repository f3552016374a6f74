// Package shop is the sandbox web shop of the case study: search, product
// pages with photos, a cart and order history, over the shared read-only
// catalog (internal/catalog) and the persona's mutable shop state in the
// world's db/shop.sqlite (tables in Schema).
//
// Glossary:
//   - Site: one shop instance serving one world directory. It opens the
//     catalog once, read-only, and the world database per request (a world
//     may be reset underneath between requests). Sessions live in the Site,
//     so two Sites never share them.
//   - Schema: the DDL of db/shop.sqlite the world synthesizer creates on day 0.
//   - element ids: the stable hooks agents and tests use, the ID* and Sel*
//     constants in site.go (#search-input, #product-image, #add-to-cart, ...).
//
// Writes take new ids as MAX(id)+1 inside an immediate transaction and stamp
// times from the world clock ("2006-01-02 15:04:05", UTC). Rejected requests
// (404, 405, 403 CSRF, 413, 400) never change the world.
//
// It imports internal/world, internal/state, internal/catalog and
// internal/site/web.
package shop
