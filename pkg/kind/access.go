package kind

// The kinds about users and their access (SPEC §9), declared under the
// file's top-level users section: a plan covers them only when the file
// has one (Spec.Declared).
const (
	User            Kind = "user"
	UserLimits      Kind = "user_limits"
	Permission      Kind = "permission"
	TopicPermission Kind = "topic_permission"
)

var accessSpecs = []Spec{
	{Kind: User, Label: "user", Plural: "users", Section: "users", APIPath: "users", InPlace: true, Broker: true, Declared: true,
		DeletePhase: 2, WritePhase: 6, Secret: []string{"password", "password_hash", "hashing_algorithm"}},
	{Kind: UserLimits, Label: "user limits", Plural: "user limits", Section: "limits", APIPath: "user-limits", InPlace: true, Broker: true, Declared: true,
		DeletePhase: 1, WritePhase: 9},
	{Kind: Permission, Label: "permission", Plural: "permissions", Section: "permissions", APIPath: "permissions", InPlace: true, Declared: true,
		DeletePhase: 1, WritePhase: 9},
	{Kind: TopicPermission, Label: "topic permission", Plural: "topic permissions", Section: "topic_permissions", APIPath: "topic-permissions", InPlace: true, Declared: true,
		DeletePhase: 1, WritePhase: 9},
}
