// Nested structs and arrays of structs, in a constant buffer and in structured buffers.
struct Material
{
    float4 Albedo;
    float4 Params; // roughness, metallic, ...
};

struct Bone
{
    float4x4 Transform;
    float4 Scale;
};

struct Rig
{
    Bone Bones[4];
    Material Skin;
    uint4 Flags;
};

cbuffer Scene
{
    Rig Character;
    Material Materials[3];
    float4 Weights[2];
};

struct Node
{
    Material Mat;
    uint4 Children;
};

StructuredBuffer<Node> Nodes;
RWStructuredBuffer<float4> Colors;

[shader("compute")]
[numthreads(4, 1, 1)]
void Gather(uint3 id : SV_DispatchThreadID)
{
    Node n = Nodes[id.x];
    float4 c = n.Mat.Albedo * Materials[id.x % 3].Albedo + Character.Skin.Params;
    c += mul(Character.Bones[id.x % 4].Transform, Character.Bones[0].Scale) * Weights[id.x % 2];
    Colors[id.x] = c * float(n.Children.x + Character.Flags.y);
}
