// Anchor for the precompiled header that lessons, solutions and tests reuse.
int main() { return 0; }
