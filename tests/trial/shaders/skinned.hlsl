// Skinned mesh: bone palette in a constant buffer, uint4 indices and float4 weights per vertex.
#define MAX_BONES 64

cbuffer Skeleton : register(b0)
{
    float4x4 Bones[MAX_BONES];
};

cbuffer Camera : register(b1)
{
    float4x4 ViewProj;
    float4 Color;
};

struct VSIn
{
    float3 Position : POSITION;
    float3 Normal : NORMAL;
    uint4 BoneIndices : BLENDINDICES;
    float4 BoneWeights : BLENDWEIGHT;
};

struct VSOut
{
    float4 Position : SV_Position;
    float3 Normal : NORMAL;
};

[shader("vertex")]
VSOut VSMain(VSIn v)
{
    float4x4 skin = Bones[v.BoneIndices.x] * v.BoneWeights.x
                  + Bones[v.BoneIndices.y] * v.BoneWeights.y
                  + Bones[v.BoneIndices.z] * v.BoneWeights.z
                  + Bones[v.BoneIndices.w] * v.BoneWeights.w;
    VSOut o;
    o.Position = mul(ViewProj, mul(skin, float4(v.Position, 1.0)));
    o.Normal = mul((float3x3)skin, v.Normal);
    return o;
}

[shader("pixel")]
float4 PSMain(VSOut i) : SV_Target0
{
    return Color * (0.5 + 0.5 * normalize(i.Normal).z);
}
