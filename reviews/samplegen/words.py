"""Word lists the sample generator draws realistic names from.

Kept apart from the generator so the logic stays readable. Brands, sectors and places
combine into company names; none of these words is a legal-form suffix, so a name's
normalised form keeps every word (a test checks this against reviews.engine.normalize).
"""

from __future__ import annotations

# Tables, laid out for reading rather than one item per line.
# fmt: off
BRANDS = (
    "Vertex", "Northwind", "Bluefin", "Cobalt", "Summit", "Meridian", "Harbor", "Granite",
    "Aurora", "Pinnacle", "Lumen", "Evergreen", "Redwood", "Silverline", "Ironclad",
    "Keystone", "Atlas", "Beacon", "Cascade", "Crescent", "Driftwood", "Ember", "Falcon",
    "Foxglove", "Glacier", "Halcyon", "Horizon", "Juniper", "Kestrel", "Lighthouse",
    "Magnolia", "Monarch", "Nimbus", "Oakridge", "Onyx", "Orchid", "Paragon", "Pioneer",
    "Quarry", "Quasar", "Radiant", "Riverbend", "Sable", "Sequoia", "Sierra", "Solstice",
    "Sterling", "Stonebridge", "Tamarack", "Tidewater", "Trident", "Tundra", "Vanguard",
    "Velvet", "Verdant", "Wavecrest", "Willow", "Windward", "Zephyr", "Alder", "Anchor",
    "Apex", "Arbor", "Argent", "Basalt", "Bramble", "Brightwater", "Canyon", "Cedar",
    "Citadel", "Clearwater", "Copperleaf", "Coral", "Cypress", "Dovetail", "Eastgate",
    "Elmstead", "Fairhaven", "Fernhill", "Flint", "Goldcrest", "Greystone", "Hawthorn",
    "Heron", "Highland", "Hollow", "Indigo", "Ivory", "Jasper", "Larkspur", "Lodestar",
    "Maple", "Marlin", "Mistral", "Moraine", "Nautilus", "Northstar", "Obsidian", "Osprey",
    "Pebble", "Peregrine", "Prairie", "Quill", "Ravenwood", "Rowan", "Saffron", "Seabright",
    "Shoreline", "Skylark", "Slate", "Spruce", "Starling", "Summitview", "Thistle", "Timber",
    "Topaz", "Umber", "Upland", "Valley", "Wildflower", "Woodland", "Yarrow", "Zenith",
)

# Each sector word with the HubSpot industry enum value it implies.
SECTORS = (
    ("Robotics", "MACHINERY"), ("Logistics", "LOGISTICS_AND_SUPPLY_CHAIN"),
    ("Analytics", "COMPUTER_SOFTWARE"), ("Foods", "FOOD_PRODUCTION"),
    ("Health", "HOSPITAL_HEALTH_CARE"), ("Energy", "RENEWABLES_ENVIRONMENT"),
    ("Labs", "BIOTECHNOLOGY"), ("Systems", "INFORMATION_TECHNOLOGY_AND_SERVICES"),
    ("Software", "COMPUTER_SOFTWARE"), ("Dynamics", "MACHINERY"),
    ("Materials", "CHEMICALS"), ("Media", "MARKETING_AND_ADVERTISING"),
    ("Capital", "FINANCIAL_SERVICES"), ("Freight", "TRANSPORTATION_TRUCKING_RAILROAD"),
    ("Textiles", "TEXTILES"), ("Pharma", "PHARMACEUTICALS"),
    ("Networks", "TELECOMMUNICATIONS"), ("Solar", "RENEWABLES_ENVIRONMENT"),
    ("Aerospace", "AVIATION_AEROSPACE"), ("Biotech", "BIOTECHNOLOGY"),
    ("Instruments", "ELECTRICAL_ELECTRONIC_MANUFACTURING"),
    ("Packaging", "PACKAGING_AND_CONTAINERS"),
    ("Mobility", "AUTOMOTIVE"), ("Beverages", "FOOD_BEVERAGES"),
    ("Advisory", "MANAGEMENT_CONSULTING"), ("Insurance", "INSURANCE"),
    ("Outfitters", "RETAIL"), ("Studios", "MEDIA_PRODUCTION"), ("Clinics", "MEDICAL_PRACTICE"),
    ("Semiconductors", "SEMICONDUCTORS"), ("Shipping", "MARITIME"),
    ("Hospitality", "HOSPITALITY"), ("Interiors", "FURNITURE"), ("Metals", "MINING_METALS"),
    ("Water", "ENVIRONMENTAL_SERVICES"), ("Security", "COMPUTER_NETWORK_SECURITY"),
    ("Learning", "E_LEARNING"), ("Agritech", "FARMING"), ("Diagnostics", "MEDICAL_DEVICES"),
    ("Cloud", "INFORMATION_TECHNOLOGY_AND_SERVICES"), ("Fabrication", "INDUSTRIAL_AUTOMATION"),
    ("Optics", "ELECTRICAL_ELECTRONIC_MANUFACTURING"), ("Payments", "FINANCIAL_SERVICES"),
    ("Telematics", "AUTOMOTIVE"), ("Brewing", "WINE_AND_SPIRITS"), ("Construction", "CONSTRUCTION"),
    ("Kitchens", "RESTAURANTS"), ("Ceramics", "GLASS_CERAMICS_CONCRETE"),
    ("Vision", "ELECTRICAL_ELECTRONIC_MANUFACTURING"), ("Motion", "MACHINERY"),
)

PLACES = (
    "Austin", "Denver", "Boston", "Portland", "Seattle", "Toronto", "Vancouver", "Chicago",
    "Atlanta", "Dallas", "Phoenix", "Raleigh", "Madison", "Boulder", "Halifax", "Calgary",
    "London", "Leeds", "Bristol", "Glasgow", "Dublin", "Cork", "Berlin", "Hamburg",
    "Munich", "Cologne", "Leipzig", "Vienna", "Zürich", "Basel", "Lyon", "Nantes",
    "Lille", "Utrecht", "Rotterdam", "Antwerp", "Ghent", "Malmö", "Uppsala", "Bergen",
    "Aarhus", "Tampere", "Porto", "Valencia", "Sevilla", "Bilbao", "Turin", "Bologna",
    "Kraków", "Brno", "Tallinn", "Riga", "Sydney", "Perth", "Adelaide", "Auckland",
    "Wellington", "Hobart", "Brisbane", "Geelong", "Pacific", "Atlantic", "Alpine",
    "Coastal", "Northern", "Southern", "Western", "Eastern", "Central", "Midland",
)

# Country -> (legal suffixes its companies use, phone prefix).
COUNTRIES = {
    "US": (("Inc", "Inc.", "LLC", "Corp.", "Corporation", "Co."), "+1"),
    "CA": (("Inc.", "Ltd.", "Corp."), "+1"),
    "GB": (("Ltd", "Limited", "PLC"), "+44"),
    "DE": (("GmbH", "AG"), "+49"),
    "FR": (("SAS", "S.A."), "+33"),
    "NL": (("BV", "B.V."), "+31"),
    "SE": (("AB",), "+46"),
    "ES": (("S.A.", "S.L."), "+34"),
    "AU": (("Pty Ltd",), "+61"),
}
# Weighted toward the US, as a typical HubSpot portal is.
COUNTRY_WEIGHTS = (("US", 45), ("GB", 12), ("DE", 10), ("CA", 8), ("FR", 6), ("NL", 6),
                   ("AU", 5), ("SE", 4), ("ES", 4))

FIRST_NAMES = (
    "Dana", "Alex", "Jordan", "Priya", "Mateo", "Sofia", "Liam", "Amara", "Noah", "Yuki",
    "Elena", "Marcus", "Ingrid", "Tomás", "Chloé", "Omar", "Hannah", "Ravi", "Zoë", "Lukas",
    "Aisha", "Benjamin", "Camila", "Daniel", "Emeka", "Fatima", "Gabriel", "Hiro", "Isabel",
    "Jamal", "Keiko", "Leon", "Mariana", "Nikolai", "Olivia", "Pablo", "Quinn", "Rosa",
    "Samuel", "Tariq", "Uma", "Victor", "Wen", "Xavier", "Yara", "Zainab", "Adrian",
    "Beatriz", "Conor", "Divya", "Erik", "Freya", "Giulia", "Hugo", "Ivana", "Jasper",
    "Kwame", "Lena", "Malik", "Nadia", "Oscar", "Petra", "Rafael", "Saoirse", "Theo",
    "Ursula", "Valentina", "Wesley", "Ximena", "Yusuf", "Zara", "Anders", "Bianca", "Cyrus",
    "Delphine", "Elias", "Farah", "Gregor", "Helga", "Imran", "Joanna", "Kofi", "Ludmila",
    "Mohammed", "Nora", "Orla", "Pieter", "Rania", "Stefan", "Tamsin", "Vikram", "Wilhelmina",
    "Aurelio", "Brigid", "Cosmin", "Dagny", "Evander", "Fiorella", "Gunnar", "Hortense",
)

LAST_NAMES = (
    "Kim", "Nguyen", "Garcia", "Müller", "Okafor", "Rossi", "Johansson", "Patel", "Dubois",
    "Tanaka", "Schmidt", "O'Brien", "Silva", "Kowalski", "Haddad", "Andersen", "Moreno",
    "Fischer", "Novak", "Bianchi", "Chen", "Walsh", "Ibrahim", "Lindqvist", "Fernández",
    "Mensah", "Petrov", "Yamamoto", "Hale", "Castillo", "Brennan", "Achterberg", "Bauer",
    "Carvalho", "Delacroix", "Eriksen", "Fontaine", "Gallagher", "Hoffmann", "Iwasaki",
    "Jankowski", "Kaur", "Laurent", "Mahmoud", "Nakamura", "Oyelaran", "Papadopoulos",
    "Quintero", "Ramírez", "Sandoval", "Thornton", "Ueda", "Vasquez", "Whitaker", "Xu",
    "Yilmaz", "Zielinski", "Abernathy", "Blackwood", "Cardenas", "Dunmore", "Estrada",
    "Fairweather", "Gutiérrez", "Hargreaves", "Ishikawa", "Jovanović", "Kaplan", "Lombardi",
    "Marchetti", "Nordström", "Okonkwo", "Pemberton", "Quigley", "Rasmussen", "Sorensen",
    "Takahashi", "Underwood", "Valdés", "Wainwright", "Yoshida", "Zapata", "Ashdown",
    "Bergstrom", "Coughlan", "Drummond", "Everhart", "Fitzgerald", "Grimaldi", "Holloway",
    "Ingram", "Jaramillo", "Kettering", "Lachance", "McAllister", "Nightingale", "Oduya",
    "Prescott", "Renwick", "Stanhope", "Tremblay", "Vandermeer", "Wolcott", "Xiong",
)

JOB_TITLES = (
    "CEO", "COO", "CFO", "CTO", "VP Sales", "VP Operations", "Head of Procurement",
    "Procurement Manager", "Operations Director", "Plant Manager", "IT Director",
    "Head of Finance", "Controller", "Engineering Manager", "Product Manager",
    "RevOps Lead", "Sales Director", "Account Manager", "Office Manager", "Founder",
    "Supply Chain Manager", "Facilities Manager", "Marketing Director", "General Counsel",
)

# Deal names are "<brand> — <topic>".
DEAL_TOPICS = (
    "cell automation", "fleet telematics", "annual renewal", "platform expansion",
    "pilot programme", "data warehouse migration", "warehouse robotics", "ERP integration",
    "security audit", "cold-chain monitoring", "solar retrofit", "line upgrade",
    "training package", "support contract", "inventory analytics", "network refresh",
    "lab equipment", "packaging redesign", "payments gateway", "quality inspection",
    "field service app", "energy monitoring", "fit-out phase 2", "supplier portal",
    "predictive maintenance", "HR suite", "customer portal", "cloud backup",
    "machine vision", "conveyor retrofit", "kitchen equipment", "compliance review",
    "brand campaign", "tooling order", "sensor rollout", "mobile app rebuild",
    "spare parts framework", "water treatment", "LIMS licences", "fleet leasing",
)

# Probability weights over the HubSpot default stages.
STAGE_WEIGHTS = (
    ("appointmentscheduled", 15), ("qualifiedtobuy", 15), ("presentationscheduled", 12),
    ("decisionmakerboughtin", 12), ("contractsent", 10), ("closedwon", 20), ("closedlost", 16),
)

FREE_MAIL_DOMAINS = ("gmail.com", "outlook.com", "yahoo.com", "hotmail.com", "icloud.com",
                     "gmx.de", "proton.me")
# fmt: on
