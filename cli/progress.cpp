// The learner's progress (progress.h).
