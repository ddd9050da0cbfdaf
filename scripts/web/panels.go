package web

// addPanels puts into a session page's data what it shows beside its
// events (panels.html).
func (s *Server) addPanels(data map[string]any, ref sessionRef) {}
