"""Where proposals live: one `Store` interface (`base`), an embedded SQLite backend (`sqlite`)."""
