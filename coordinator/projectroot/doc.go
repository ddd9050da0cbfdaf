// Package projectroot decides where a project lies and which directories
// ralph may take: the project's root found from where the person started
// (a .ralph/ or a repository's top, never the home directory or a
// directory another user owns, Find and Root), the directories the model
// is never granted as a project or an --add-dir (Grantable, the kept list
// Kept), and a project whose git would be one the model wrote.
// It never imports the project, which opens a session at the root it
// finds.
package projectroot
