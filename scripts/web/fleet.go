package web

// addFleet puts into a session page's data the tasks of a run on
// Temporal across its workers (fleet.html).
func (s *Server) addFleet(data map[string]any, ref sessionRef) {}
