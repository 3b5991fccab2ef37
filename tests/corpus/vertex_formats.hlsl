// Vertex inputs of many 32-bit shapes, built-ins and interpolation modifiers (centroid and
// sample: tests/compiler/test_target_constructs.py).
struct VSInput
{
    float3 Position : POSITION;
    float Weight : BLENDWEIGHT0;
    float2 Uv0 : TEXCOORD0;
    float2 Uv1 : TEXCOORD1;
    float4 Color : COLOR0;
    uint4 Joints : BLENDINDICES0;
    int2 Cell : CELL;
    uint Material : MATERIAL;
    uint InstanceId : SV_InstanceID;
};

struct VSOutput
{
    float4 Position : SV_Position;
    nointerpolation uint Material : MATERIAL;
    linear float2 Uv : TEXCOORD0;
    float4 Color : COLOR0;
    noperspective float Depth : DEPTH0;
    float3 Normal : NORMAL;
};

[shader("vertex")]
VSOutput MeshVS(VSInput input)
{
    VSOutput o;
    float3 p = input.Position * input.Weight + float3(float2(input.Cell), 0.0);
    o.Position = float4(p, 1.0 + float(input.InstanceId));
    o.Material = input.Material + input.Joints.x;
    o.Uv = input.Uv0 + input.Uv1;
    o.Color = input.Color;
    o.Depth = p.z;
    o.Normal = normalize(p);
    return o;
}

struct PSOutput
{
    float4 Color : SV_Target0;
    float4 Normal : SV_Target1;
};

[shader("pixel")]
PSOutput MeshPS(VSOutput input, bool front : SV_IsFrontFace)
{
    PSOutput o;
    o.Color = input.Color * float4(input.Uv, input.Depth, 1.0) * float(input.Material);
    o.Normal = float4(input.Normal * (front ? 1.0 : -1.0), 0.0);
    return o;
}
