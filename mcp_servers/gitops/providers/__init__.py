"""Pull-request providers behind one interface (`base.Provider`): `local` (PR records kept beside
the repository, merges done by git itself). The GitHub provider arrives later."""
