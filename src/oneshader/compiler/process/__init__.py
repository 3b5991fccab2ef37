"""The compiler in other processes: a worker per compile (crash- and hang-contained), the warm
zygote workers are forked from, the resident compile server. Each module says which side of the
process boundary its code runs on."""
