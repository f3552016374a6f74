package persona

// occupation is one kind of life the generator draws: what the person does,
// the domain of life the worlds' stories come from, and the tools, sites,
// services and people that go with it.
type occupation struct {
	Title    string
	Domain   string
	Tools    []string
	Sites    []string // core sites, most used first
	Services []string // core services
	Roles    []string // contact roles
	Arcs     []string // preferred arc templates
}

var occupations = []occupation{
	{"freelance audio-visual technician", "work: venue installs", []string{"csv", "markdown", "pdf"}, []string{"shop", "devices", "maps"}, []string{"messages", "calendar", "payments"}, []string{"venue manager", "install assistant", "equipment supplier", "accountant"}, []string{"equipment-upgrade", "client-project", "side-business"}},
	{"secondary-school chemistry teacher", "work: teaching", []string{"markdown", "csv", "pdf"}, []string{"courses", "archive", "dictionary"}, []string{"mail", "calendar", "tasks"}, []string{"head of department", "lab technician", "parent", "colleague"}, []string{"course-prep", "learn-skill", "reading-project"}},
	{"data analyst at a logistics firm", "work: analytics", []string{"csv", "python", "markdown"}, []string{"code", "models", "search"}, []string{"mail", "tasks", "notes"}, []string{"manager", "colleague", "client", "friend"}, []string{"data-report", "learn-skill", "open-source"}},
	{"nurse on rotating shifts", "health: caregiving", []string{"markdown", "csv"}, []string{"recipes", "news", "maps"}, []string{"calendar", "messages", "notes"}, []string{"charge nurse", "partner", "mother", "friend"}, []string{"health-routine", "family-event", "meal-plan"}},
	{"graduate student in marine biology", "study: research", []string{"python", "csv", "pdf"}, []string{"archive", "code", "courses"}, []string{"mail", "notes", "tasks"}, []string{"advisor", "lab mate", "roommate", "sibling"}, []string{"thesis-chapter", "conference-trip", "reading-project"}},
	{"small bakery owner", "work: food business", []string{"csv", "markdown", "pdf"}, []string{"shop", "recipes", "maps"}, []string{"payments", "support", "contacts"}, []string{"supplier", "shop assistant", "landlord", "accountant"}, []string{"side-business", "equipment-upgrade", "menu-launch"}},
	{"software engineer at a startup", "work: software", []string{"python", "markdown", "csv"}, []string{"code", "models", "search"}, []string{"messages", "tasks", "calendar"}, []string{"tech lead", "product manager", "partner", "friend"}, []string{"open-source", "conference-trip", "learn-skill"}},
	{"retired civil engineer", "leisure: retirement", []string{"markdown", "csv"}, []string{"news", "sports", "stays"}, []string{"mail", "contacts", "payments"}, []string{"daughter", "old colleague", "neighbour", "doctor"}, []string{"trip", "home-renovation", "family-event"}},
	{"amateur triathlete and physiotherapist", "health: sport", []string{"csv", "markdown"}, []string{"sports", "shop", "maps"}, []string{"calendar", "tasks", "messages"}, []string{"coach", "training partner", "patient", "brother"}, []string{"race-training", "equipment-upgrade", "trip"}},
	{"freelance translator", "work: languages", []string{"markdown", "pdf", "csv"}, []string{"dictionary", "news", "archive"}, []string{"mail", "payments", "tasks"}, []string{"agency coordinator", "client", "proofreader", "friend"}, []string{"client-project", "learn-skill", "tax-season"}},
	{"parent of two running a household", "family: household", []string{"csv", "markdown"}, []string{"recipes", "shop", "courses"}, []string{"calendar", "tasks", "payments"}, []string{"partner", "babysitter", "teacher", "grandmother"}, []string{"family-event", "meal-plan", "home-renovation"}},
	{"machine-learning researcher", "work: research", []string{"python", "csv", "markdown"}, []string{"models", "archive", "code"}, []string{"mail", "notes", "calendar"}, []string{"collaborator", "student", "program chair", "partner"}, []string{"paper-deadline", "conference-trip", "open-source"}},
	{"travel blogger", "leisure: travel", []string{"markdown", "csv"}, []string{"stays", "flights", "maps"}, []string{"messages", "payments", "notes"}, []string{"editor", "photographer", "sponsor", "friend"}, []string{"trip", "side-business", "photo-story"}},
	{"sports journalist", "work: media", []string{"markdown", "csv"}, []string{"sports", "news", "search"}, []string{"mail", "messages", "calendar"}, []string{"editor", "source", "camera operator", "partner"}, []string{"season-coverage", "trip", "data-report"}},
	{"architecture student", "study: design", []string{"pdf", "markdown", "csv"}, []string{"courses", "maps", "shop"}, []string{"tasks", "calendar", "messages"}, []string{"tutor", "studio partner", "flatmate", "father"}, []string{"course-prep", "portfolio", "trip"}},
	{"independent bookkeeper", "work: finance", []string{"csv", "python", "pdf"}, []string{"calc", "search", "news"}, []string{"payments", "mail", "contacts"}, []string{"client", "tax advisor", "assistant", "sister"}, []string{"tax-season", "client-project", "data-report"}},
	{"home cook building a recipe blog", "leisure: cooking", []string{"markdown", "csv"}, []string{"recipes", "shop", "search"}, []string{"notes", "messages", "payments"}, []string{"co-author", "photographer", "neighbour", "friend"}, []string{"menu-launch", "meal-plan", "photo-story"}},
	{"hardware hobbyist who builds synthesizers", "leisure: making", []string{"csv", "python", "markdown"}, []string{"devices", "shop", "code"}, []string{"support", "notes", "payments"}, []string{"maker-space lead", "supplier", "bandmate", "friend"}, []string{"equipment-upgrade", "open-source", "learn-skill"}},
	{"junior doctor preparing for exams", "study: medicine", []string{"markdown", "pdf"}, []string{"courses", "archive", "dictionary"}, []string{"calendar", "tasks", "notes"}, []string{"consultant", "study partner", "partner", "mother"}, []string{"exam-prep", "health-routine", "reading-project"}},
	{"football club volunteer coordinator", "community: sport", []string{"csv", "markdown"}, []string{"sports", "maps", "news"}, []string{"messages", "contacts", "calendar"}, []string{"club secretary", "coach", "parent", "sponsor"}, []string{"season-coverage", "community-event", "fundraiser"}},
	{"urban gardener and beekeeper", "leisure: gardening", []string{"csv", "markdown"}, []string{"shop", "search", "recipes"}, []string{"notes", "tasks", "payments"}, []string{"allotment neighbour", "supplier", "beekeeping mentor", "son"}, []string{"garden-season", "side-business", "learn-skill"}},
	{"customer-support team lead", "work: support", []string{"csv", "markdown"}, []string{"devices", "search", "news"}, []string{"support", "mail", "tasks"}, []string{"manager", "agent", "vendor contact", "partner"}, []string{"data-report", "equipment-upgrade", "team-offsite"}},
	{"wedding planner", "work: events", []string{"csv", "pdf", "markdown"}, []string{"stays", "maps", "shop"}, []string{"calendar", "contacts", "payments"}, []string{"bride", "caterer", "venue owner", "florist"}, []string{"client-project", "community-event", "trip"}},
	{"open-source maintainer", "work: open source", []string{"python", "markdown", "csv"}, []string{"code", "search", "models"}, []string{"messages", "mail", "tasks"}, []string{"co-maintainer", "contributor", "sponsor", "partner"}, []string{"open-source", "conference-trip", "release"}},
	{"history PhD student", "study: humanities", []string{"markdown", "pdf", "csv"}, []string{"archive", "dictionary", "news"}, []string{"notes", "mail", "calendar"}, []string{"supervisor", "archivist", "flatmate", "grandfather"}, []string{"thesis-chapter", "reading-project", "trip"}},
	{"pharmacist", "health: pharmacy", []string{"csv", "markdown"}, []string{"news", "recipes", "courses"}, []string{"tasks", "contacts", "calendar"}, []string{"pharmacy manager", "colleague", "partner", "brother"}, []string{"learn-skill", "health-routine", "family-event"}},
	{"e-commerce seller of vintage cameras", "work: retail", []string{"csv", "pdf", "markdown"}, []string{"shop", "devices", "search"}, []string{"payments", "support", "messages"}, []string{"buyer", "courier", "repair technician", "friend"}, []string{"side-business", "photo-story", "tax-season"}},
	{"amateur astronomer", "leisure: science", []string{"python", "csv", "markdown"}, []string{"archive", "calc", "devices"}, []string{"notes", "calendar", "messages"}, []string{"club president", "observing partner", "partner", "niece"}, []string{"learn-skill", "equipment-upgrade", "trip"}},
	{"high-school student applying to university", "study: school", []string{"markdown", "pdf"}, []string{"courses", "dictionary", "search"}, []string{"tasks", "mail", "calendar"}, []string{"teacher", "counsellor", "best friend", "mother"}, []string{"exam-prep", "applications", "learn-skill"}},
	{"long-distance lorry driver", "work: transport", []string{"csv", "markdown"}, []string{"maps", "stays", "news"}, []string{"messages", "payments", "calendar"}, []string{"dispatcher", "wife", "mechanic", "old friend"}, []string{"trip", "health-routine", "equipment-upgrade"}},
	{"municipal urban planner", "work: public sector", []string{"pdf", "csv", "markdown"}, []string{"maps", "news", "archive"}, []string{"mail", "calendar", "notes"}, []string{"director", "consultant", "council member", "partner"}, []string{"client-project", "data-report", "community-event"}},
	{"personal-finance enthusiast saving for a house", "family: money", []string{"csv", "python", "markdown"}, []string{"calc", "news", "search"}, []string{"payments", "tasks", "notes"}, []string{"partner", "mortgage broker", "father", "friend"}, []string{"tax-season", "home-renovation", "data-report"}},
	{"indie game developer", "work: games", []string{"python", "markdown", "csv"}, []string{"code", "models", "shop"}, []string{"messages", "tasks", "support"}, []string{"artist", "composer", "publisher", "brother"}, []string{"release", "open-source", "conference-trip"}},
	{"yoga instructor", "health: wellness", []string{"markdown", "csv"}, []string{"courses", "recipes", "maps"}, []string{"calendar", "contacts", "payments"}, []string{"studio owner", "student", "partner", "sister"}, []string{"health-routine", "side-business", "retreat"}},
	{"museum curator", "work: culture", []string{"markdown", "pdf", "csv"}, []string{"archive", "news", "stays"}, []string{"mail", "calendar", "contacts"}, []string{"director", "lender", "conservator", "partner"}, []string{"exhibition", "trip", "reading-project"}},
	{"cycling commuter and bike mechanic", "leisure: cycling", []string{"csv", "markdown"}, []string{"shop", "maps", "sports"}, []string{"notes", "messages", "support"}, []string{"shop owner", "club mate", "partner", "customer"}, []string{"race-training", "equipment-upgrade", "community-event"}},
	{"language learner moving abroad", "life: relocation", []string{"markdown", "csv"}, []string{"dictionary", "stays", "flights"}, []string{"mail", "tasks", "contacts"}, []string{"relocation agent", "landlord", "tutor", "mother"}, []string{"relocation", "learn-skill", "trip"}},
	{"veterinary nurse", "health: animals", []string{"csv", "markdown"}, []string{"shop", "news", "maps"}, []string{"calendar", "messages", "tasks"}, []string{"vet", "pet owner", "partner", "friend"}, []string{"health-routine", "learn-skill", "family-event"}},
	{"quantitative trader", "work: markets", []string{"python", "csv", "markdown"}, []string{"calc", "news", "models"}, []string{"mail", "notes", "payments"}, []string{"desk head", "quant", "partner", "old classmate"}, []string{"data-report", "learn-skill", "conference-trip"}},
	{"theatre lighting designer", "work: stage", []string{"pdf", "csv", "markdown"}, []string{"devices", "shop", "stays"}, []string{"calendar", "messages", "contacts"}, []string{"director", "stage manager", "electrician", "partner"}, []string{"client-project", "equipment-upgrade", "trip"}},
	{"community-choir organiser", "community: music", []string{"markdown", "csv"}, []string{"news", "maps", "search"}, []string{"contacts", "calendar", "mail"}, []string{"conductor", "accompanist", "member", "partner"}, []string{"community-event", "fundraiser", "trip"}},
	{"climate-policy analyst", "work: policy", []string{"python", "pdf", "markdown"}, []string{"archive", "news", "models"}, []string{"mail", "tasks", "notes"}, []string{"director", "co-author", "stakeholder", "partner"}, []string{"data-report", "paper-deadline", "conference-trip"}},
	{"semi-professional chess player", "leisure: games", []string{"markdown", "csv"}, []string{"search", "courses", "flights"}, []string{"calendar", "messages", "payments"}, []string{"coach", "club captain", "partner", "rival"}, []string{"tournament", "learn-skill", "trip"}},
	{"dog-walking business owner", "work: pets", []string{"csv", "markdown"}, []string{"maps", "shop", "news"}, []string{"payments", "contacts", "calendar"}, []string{"client", "walker", "vet", "partner"}, []string{"side-business", "tax-season", "community-event"}},
}

// arcTemplate is a kind of multi-day story. Its anchor kind names the
// grounding list the anchor is drawn from.
type arcTemplate struct {
	ID         string
	Title      string // with %s for the anchor
	Summary    string
	AnchorKind string // city, cuisine, team, subject, language, section, category, thing
	Sites      []string
	Services   []string
	Skills     []string
	Image      bool // its decisive fact is in an image
}

var arcTemplates = map[string]arcTemplate{
	"trip":              {"trip", "A trip to %s", "Plan, book and take a trip: flights, a hotel, places to see, a budget, an itinerary shared with family.", "city", []string{"flights", "stays", "maps"}, []string{"calendar", "payments", "messages"}, []string{"flight_reserve", "hotel_book", "place_save", "trip_itinerary", "budget_sheet"}, false},
	"conference-trip":   {"conference-trip", "Speaking at a conference in %s", "Submit, prepare slides and notes, book travel, meet people there.", "city", []string{"flights", "stays", "archive"}, []string{"calendar", "mail", "tasks"}, []string{"flight_reserve", "hotel_book", "paper_save", "meeting_notes"}, false},
	"equipment-upgrade": {"equipment-upgrade", "Upgrading the %s gear", "Compare models on spec sheets and photos, order, receive, return what does not fit.", "category", []string{"shop", "devices"}, []string{"support", "payments", "messages"}, []string{"shop_purchase", "device_order", "order_delivered", "device_return", "save_photo", "save_invoice_pdf", "support_ticket"}, true},
	"photo-story":       {"photo-story", "A photo series on %s", "Collect photos, pick the ones that match a brief by how they look, publish.", "thing", []string{"shop", "search"}, []string{"notes", "messages"}, []string{"save_photo", "write_note"}, true},
	"client-project":    {"client-project", "The %s client project", "A client's job from brief to invoice: messages, a plan, deliverables, payment.", "thing", []string{"shop", "maps"}, []string{"messages", "mail", "payments"}, []string{"dm_conversation", "mail_receive", "save_invoice_pdf", "payment_book", "project_readme"}, false},
	"side-business":     {"side-business", "Selling %s on the side", "Orders, stock in a CSV, customer questions, monthly numbers.", "category", []string{"shop", "search"}, []string{"payments", "support", "contacts"}, []string{"export_csv", "write_script", "payment_book", "support_ticket"}, true},
	"learn-skill":       {"learn-skill", "Learning %s", "Enroll in a course, submit assignments, keep notes and a word list.", "subject", []string{"courses", "dictionary", "search"}, []string{"notes", "tasks", "calendar"}, []string{"course_enroll", "course_submit", "word_save", "journal_entry"}, false},
	"course-prep":       {"course-prep", "Preparing a unit on %s", "Read papers, collect material, write lesson notes, schedule classes.", "subject", []string{"courses", "archive"}, []string{"calendar", "notes", "mail"}, []string{"paper_save", "reading_list", "calendar_schedule", "write_note"}, false},
	"reading-project":   {"reading-project", "Reading up on %s", "A reading list of papers and articles, notes on each, a summary.", "subject", []string{"archive", "news"}, []string{"notes"}, []string{"paper_save", "news_bookmark", "reading_list"}, false},
	"data-report":       {"data-report", "A monthly %s report", "Export data to CSV, write a script that computes the figure, report it.", "thing", []string{"calc", "search"}, []string{"mail", "tasks"}, []string{"export_csv", "write_script", "mail_with_attachment"}, false},
	"open-source":       {"open-source", "Contributing to a %s project", "Star repositories, open issues, keep a project README, coordinate with maintainers.", "language", []string{"code", "models"}, []string{"messages", "tasks"}, []string{"repo_star", "repo_issue", "repo_create", "project_readme"}, false},
	"release":           {"release", "Shipping the %s release", "Issues, a changelog, a release checklist and the announcement.", "language", []string{"code"}, []string{"tasks", "messages"}, []string{"repo_issue", "project_readme", "todo_add", "todo_complete"}, false},
	"paper-deadline":    {"paper-deadline", "A paper on %s for a deadline", "Related work, experiments in scripts, a draft, co-author messages.", "subject", []string{"archive", "models"}, []string{"mail", "tasks"}, []string{"paper_save", "write_script", "dataset_collect", "model_like"}, false},
	"thesis-chapter":    {"thesis-chapter", "The thesis chapter on %s", "Sources, notes, a chapter outline, meetings with the supervisor.", "subject", []string{"archive", "dictionary"}, []string{"mail", "calendar", "notes"}, []string{"paper_save", "word_save", "meeting_notes"}, false},
	"health-routine":    {"health-routine", "A %s routine", "Habits tracked daily, meals planned, appointments kept.", "thing", []string{"recipes", "maps"}, []string{"calendar", "habits"}, []string{"habit_check_in", "recipe_save", "calendar_schedule"}, false},
	"meal-plan":         {"meal-plan", "Cooking more %s food", "Save recipes, plan the week's meals, a shopping list, reviews.", "cuisine", []string{"recipes", "shop"}, []string{"notes", "tasks"}, []string{"recipe_save", "recipe_review", "shopping_list"}, true},
	"menu-launch":       {"menu-launch", "A new %s menu", "Test recipes, cost them in a sheet, photos of the dishes, launch.", "cuisine", []string{"recipes", "shop"}, []string{"payments", "messages"}, []string{"recipe_save", "budget_sheet", "save_photo"}, true},
	"family-event":      {"family-event", "Organising %s", "Guests, a venue, a budget, invitations and replies.", "thing", []string{"maps", "shop"}, []string{"calendar", "contacts", "messages"}, []string{"calendar_schedule", "group_chat", "budget_sheet", "place_save"}, false},
	"home-renovation":   {"home-renovation", "Renovating the %s", "Quotes, a budget sheet, purchases, tradespeople's visits.", "thing", []string{"shop", "devices"}, []string{"payments", "calendar", "budget"}, []string{"budget_sheet", "shop_purchase", "budget_entry", "calendar_schedule"}, true},
	"tax-season":        {"tax-season", "The %s tax return", "Collect receipts and statements, a sheet of deductions, file before the deadline.", "thing", []string{"calc"}, []string{"payments", "mail", "tasks"}, []string{"export_csv", "write_script", "save_invoice_pdf", "todo_add"}, false},
	"race-training":     {"race-training", "Training for the %s race", "A training log, gear, travel to the race, results.", "city", []string{"sports", "shop", "maps"}, []string{"calendar", "habits"}, []string{"habit_check_in", "shop_purchase", "place_save"}, false},
	"season-coverage":   {"season-coverage", "Following %s this season", "Fixtures, results, notes on each match, trips to away games.", "team", []string{"sports", "news"}, []string{"calendar", "notes"}, []string{"team_follow", "news_bookmark", "journal_entry"}, false},
	"community-event":   {"community-event", "The %s community day", "Volunteers, a venue on the map, a schedule, messages to everyone.", "thing", []string{"maps", "news"}, []string{"contacts", "messages", "calendar"}, []string{"group_chat", "place_save", "calendar_schedule"}, false},
	"fundraiser":        {"fundraiser", "A fundraiser for %s", "Donations booked, a sheet of pledges, thank-you mails.", "thing", []string{"search"}, []string{"payments", "mail"}, []string{"payment_book", "export_csv", "mail_reply"}, false},
	"exam-prep":         {"exam-prep", "Preparing for the %s exam", "Courses, a study timetable, flashcard words, practice scripts.", "subject", []string{"courses", "dictionary"}, []string{"calendar", "tasks"}, []string{"course_enroll", "word_save", "todo_add"}, false},
	"applications":      {"applications", "Applications for %s", "Programmes compared, documents drafted, deadlines tracked.", "subject", []string{"courses", "search"}, []string{"mail", "tasks"}, []string{"search_save", "todo_add", "write_note"}, false},
	"garden-season":     {"garden-season", "The %s growing season", "Seeds and tools bought, a planting log, harvest notes.", "thing", []string{"shop", "search"}, []string{"notes", "tasks"}, []string{"shop_purchase", "journal_entry", "save_photo"}, true},
	"portfolio":         {"portfolio", "A portfolio of %s work", "Pick images, write captions, share with a tutor.", "thing", []string{"courses", "shop"}, []string{"messages", "notes"}, []string{"save_photo", "project_readme"}, true},
	"team-offsite":      {"team-offsite", "The team offsite in %s", "Hotel, agenda, travel for the team, expenses.", "city", []string{"stays", "flights"}, []string{"calendar", "payments"}, []string{"hotel_book", "flight_reserve", "meeting_notes"}, false},
	"relocation":        {"relocation", "Moving to %s", "Flats, flights, paperwork, a new language, new contacts.", "city", []string{"stays", "flights", "dictionary"}, []string{"mail", "contacts", "tasks"}, []string{"hotel_book", "word_save", "contact_save"}, false},
	"retreat":           {"retreat", "A retreat in %s", "A venue, participants, a schedule, payments collected.", "city", []string{"stays", "maps"}, []string{"payments", "calendar"}, []string{"hotel_book", "payment_book", "calendar_schedule"}, false},
	"exhibition":        {"exhibition", "An exhibition on %s", "Loans, images of the pieces, shipping, the opening.", "thing", []string{"archive", "stays"}, []string{"mail", "calendar"}, []string{"save_photo", "mail_receive", "calendar_schedule"}, true},
	"tournament":        {"tournament", "The %s tournament", "Register, travel, prepare, results.", "city", []string{"flights", "stays", "search"}, []string{"calendar", "payments"}, []string{"flight_reserve", "hotel_book", "journal_entry"}, false},
}

// things anchor the arcs whose anchor is not a catalog entity.
var things = []string{
	"kitchen", "spring", "autumn", "wedding", "anniversary", "birthday", "harbour", "garden", "studio", "neighbourhood",
	"annual", "quarterly", "river clean-up", "school", "library", "bakery", "lighting", "audio", "camera", "bicycle",
	"attic", "bathroom", "summer", "winter", "festival", "market", "shelter", "hospital", "youth club", "museum",
	"balcony", "allotment", "rooftop", "old town", "coastal", "mountain", "family", "office", "warehouse", "clinic",
}

var firstNames = []string{
	"Ada", "Ben", "Chloe", "Dev", "Elena", "Farid", "Greta", "Hugo", "Ines", "Jamal", "Kira", "Liam", "Mira", "Nikhil", "Olga",
	"Pablo", "Quinn", "Rosa", "Sami", "Tara", "Umar", "Vera", "Wes", "Xiu", "Yara", "Zane", "Amara", "Bruno", "Celia", "Dario",
	"Esme", "Felix", "Gwen", "Hana", "Ivan", "Jonah", "Keiko", "Lorenzo", "Maeve", "Noor", "Oscar", "Petra", "Rafael", "Sana",
	"Tomas", "Ulla", "Viktor", "Wanda", "Yusuf", "Zofia", "Aiden", "Bianca", "Caleb", "Daria", "Emil", "Fatima", "Gideon", "Helga",
	"Isak", "Jade", "Kofi", "Leah", "Mateo", "Nadia", "Omar", "Pia", "Reza", "Sofia", "Theo", "Uma", "Valeria", "Willa", "Yosef",
	"Zara", "Anton", "Beatriz", "Cyrus", "Dalia", "Elliot", "Freya", "Gustav", "Hiro", "Ilse", "Joaquin", "Kamala", "Lucas",
	"Marta", "Nils", "Orla", "Priyanka", "Ruben", "Selma", "Tobias", "Ursula", "Vikram", "Wren", "Ximena", "Yannick", "Zeynep",
}

var lastNames = []string{
	"Abbott", "Bauer", "Castillo", "Dubois", "Eriksen", "Fischer", "Gallo", "Haddad", "Ivanova", "Jensen", "Kowalski", "Lindgren",
	"Moreau", "Nakamura", "Osei", "Petrov", "Quispe", "Rossi", "Schmidt", "Tanaka", "Ueda", "Varga", "Weber", "Xu", "Yilmaz",
	"Zimmermann", "Adeyemi", "Brennan", "Costa", "Dalton", "Esposito", "Fontaine", "Garcia", "Hansen", "Iqbal", "Juarez", "Kim",
	"Larsen", "Mendes", "Novak", "Okonkwo", "Pereira", "Ramos", "Silva", "Torres", "Ulrich", "Vasquez", "Wagner", "Yamada",
	"Zhou", "Andersson", "Bianchi", "Chen", "Diaz", "Eklund", "Ferrari", "Gomez", "Horvat", "Ibrahim", "Jovanovic", "Khan",
	"Lopez", "Muller", "Nguyen", "Olsen", "Park", "Romano", "Sato", "Tran", "Uddin", "Volkov", "Walsh", "Young", "Zeller",
}

var households = []string{"lives alone", "lives with a partner", "lives with a partner and two children", "shares a flat with two friends",
	"lives with an elderly parent", "lives with a partner and a dog", "single parent of one", "lives with three flatmates"}

var passwordWords = []string{"amber", "basil", "cedar", "delta", "ember", "fjord", "garnet", "harbor", "indigo", "juniper",
	"kestrel", "lagoon", "maple", "nimbus", "orchid", "pepper", "quartz", "raven", "saffron", "tundra", "umber", "violet", "willow", "zephyr"}
