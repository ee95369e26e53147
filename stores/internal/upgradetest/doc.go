// Package upgradetest proves the SQL stores' migration history against
// databases created by an earlier release: it loads a schema and the rows an
// engine run left in it (testdata), migrates with the current code and
// resumes the run that was waiting for a human.
package upgradetest
