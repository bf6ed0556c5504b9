package kind

// vhostLimitsItem: a vhost's limits (SPEC §9), one item per vhost, named
// after it, whose settings are the limits set (limits: {max-queues: 10}).
var vhostLimitsItem = &ItemSpec{
	Shape: Single,
	Fields: []Field{
		{Name: "max-connections", Type: FieldInt, Min: -1, Help: "the most client connections the vhost accepts (-1: no limit, 0: none)"},
		{Name: "max-queues", Type: FieldInt, Min: -1, Help: "the most queues the vhost holds (-1: no limit, 0: none)"},
	},
}

// userLimitsItem: a user's limits, one item per user, named after it.
var userLimitsItem = &ItemSpec{
	Shape: Single,
	Fields: []Field{
		{Name: "max-connections", Type: FieldInt, Min: -1, Help: "the most connections the user may open (-1: no limit)"},
		{Name: "max-channels", Type: FieldInt, Min: -1, Help: "the most channels the user may open (-1: no limit)"},
	},
}
